package opencode

import (
	"os"
	"testing"

	"github.com/hubdev/hub/hub/portowner/portownertest"
)

// TestMain lets the test binary serve as another user's listener
// (portownertest) when started as one.
func TestMain(m *testing.M) {
	portownertest.Main()
	os.Exit(m.Run())
}
