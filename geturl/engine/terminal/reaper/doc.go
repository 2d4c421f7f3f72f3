// Package reaper is the small supervisor between the hub and each terminal
// command's shell: a child subreaper that keeps every process the command
// starts in one tree, so that a timeout, a stop, a shutdown or the hub's
// death can end all of them, including what left the shell's process group
// or session. The hub starts its own executable again under the name Arg0;
// this package's init takes over there. The hub's side of the protocol is
// in package terminal (process.go).
//
// On Linux it is a child subreaper and lists processes from /proc; on
// macOS, which has no subreaper, it lists them with sysctl kern.proc and
// finds what a command orphaned by its session (reaper_darwin.go says what
// escapes). What to signal is chosen by portable code (tree.go).
package reaper
