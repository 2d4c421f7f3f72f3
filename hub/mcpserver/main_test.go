package mcpserver

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	stdioChild() // returns unless this process is a test's child
	goleak.VerifyTestMain(m)
}
