package autostart

// native is Windows' kind: a Run value.
const native = RunKey
