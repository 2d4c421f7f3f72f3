package hub

import (
	"testing"

	"github.com/hubdev/hub/hub/portowner/portownertest"
	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind. A
// process started as another user's listener (portownertest) serves that
// instead.
func TestMain(m *testing.M) {
	portownertest.Main()
	goleak.VerifyTestMain(m)
}
