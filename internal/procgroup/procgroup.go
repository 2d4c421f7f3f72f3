// Package procgroup starts a child in a process group of its own and ends
// the group: a launcher script's children go with it. On unix that is
// setpgid and a signal to the group; Windows has no signals, so there the
// child gets a new process group (no console Ctrl-C from ours) and ending
// it terminates the child only.
package procgroup
