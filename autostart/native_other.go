//go:build !darwin && !windows

package autostart

// native is the kind of Linux and the other Unix desktops: an XDG
// autostart entry.
const native = XDG
