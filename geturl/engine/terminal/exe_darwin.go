package terminal

import "os"

// reaperExe is the executable started as the reaper: the running one's
// path as the OS reports it. macOS has no /proc/self/exe, so a binary
// replaced at that path since (an upgrade) is what runs; it is the same
// hub, and its reaper speaks the same protocol.
func reaperExe() (string, error) { return os.Executable() }
