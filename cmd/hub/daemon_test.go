package main

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestDaemonScripts drives the real CLI end to end: start, status, stop,
// logs and config, in a private HOME.
func TestDaemonScripts(t *testing.T) {
	testscript.Run(t, scriptParams("testdata/script"))
}
