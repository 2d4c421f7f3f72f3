//go:build unix && !linux && !darwin

package hub

import "os"

// The BSDs and other unixes: not a release target. The pid checks work
// (signal 0); the lock table, command and start time are not read, so
// `hub stop` and `hub status` refuse to trust a pid they cannot identify.

func isZombie(int) bool { return false }

// FlockHolders is ErrNoLockTable here.
func FlockHolders(os.FileInfo) ([]int, error) { return nil, ErrNoLockTable }

// ProcessCommand is ErrNoProcessInfo here.
func ProcessCommand(int) (string, []string, error) { return "", nil, ErrNoProcessInfo }

// ProcessStart is ErrNoProcessInfo here.
func ProcessStart(int) (string, error) { return "", ErrNoProcessInfo }
