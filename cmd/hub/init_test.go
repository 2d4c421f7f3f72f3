package main

import (
	"testing"

	"github.com/hubdev/hub/internal/inittrace"
)

// TestInitIsCheap: every hub start and CLI call pays this package's init,
// so what it builds at init is bounded; the rest is built on first use.
func TestInitIsCheap(t *testing.T) {
	inittrace.Bound(t, "github.com/hubdev/hub/cmd/hub", 16<<10)
}
