//go:build unix && !linux

package terminal

import "errors"

// waitExitedNoReap is Linux-only (waitid WNOWAIT). Elsewhere the leader is
// reaped first and its group signalled after, which leaves a small window
// in which the kernel could, in theory, hand the group id to an unrelated
// process group if every member of this one had already gone.
func waitExitedNoReap(pid int) error { return errors.ErrUnsupported }
