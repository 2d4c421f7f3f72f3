package autostart

// native is macOS's kind: a LaunchAgent.
const native = LaunchAgent
