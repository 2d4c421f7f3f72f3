//go:build !linux

package supervisor

// verifyLockHolder: see verifyByStart (the OS lists no lock holders).
func verifyLockHolder(dir string, pid int) error { return verifyByStart(dir, pid) }
