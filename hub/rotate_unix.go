//go:build !windows

package hub

// renameOverOpen: unix renames over and links an open file, so the log is
// rotated without its path ever going missing (rotateLinked).
const renameOverOpen = true
