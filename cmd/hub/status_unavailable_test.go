package main

import (
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/supervisor"
)

// What the hub cannot do on its OS is said in `hub status`, one line each;
// on Linux there is nothing to say and the output is as it was.
func TestPrintStatusSaysWhatIsUnavailable(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	doc := &statusDoc{State: supervisor.State{PID: 7, Started: now.Add(-10 * time.Second), Config: "hub.yaml"}, Running: true}
	var b strings.Builder
	printStatus(&b, doc, now)
	if strings.Contains(b.String(), "not on this OS") {
		t.Fatalf("nothing unavailable, yet:\n%s", b.String())
	}
	doc.Unavailable = []string{"memory hiding: x", "signals: y"}
	b.Reset()
	printStatus(&b, doc, now)
	if !strings.HasSuffix(b.String(), "not on this OS: memory hiding: x\nnot on this OS: signals: y\n") {
		t.Fatalf("status:\n%s", b.String())
	}
}
