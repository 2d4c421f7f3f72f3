//go:build !unix

package stitchslop

import "testing"

// makeFIFO: this system has no named pipes in the file system.
func makeFIFO(*testing.T, string) bool { return false }
