package hubmcp

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/hubdev/hub/hub/portowner/portownertest"
)

// Every test stops its hub and its hub mcp: nothing may be left running.
// The test binary is also another user's listener when started as one
// (portownertest).
func TestMain(m *testing.M) {
	portownertest.Main()
	goleak.VerifyTestMain(m)
}
