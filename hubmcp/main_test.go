package hubmcp

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test stops its hub and its hub mcp: nothing may be left running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
