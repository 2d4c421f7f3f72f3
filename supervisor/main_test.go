package supervisor

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/hubdev/hub/hub/portowner/portownertest"
)

// TestMain fails the package if any test leaves a goroutine behind. It
// runs as another user's listener when started as one (portownertest).
func TestMain(m *testing.M) {
	portownertest.Main()
	goleak.VerifyTestMain(m)
}
