package mutate

import (
	"context"
	"testing"
	"time"
)

// TestGateAcrossEngines: two sessions' engines on one project serialise
// their mutations; a cancelled wait is a structured project_busy refusal.
func TestGateAcrossEngines(t *testing.T) {
	p := newProject(t, map[string]string{"a.txt": "a\n"})
	other := &Engine{Scope: p.scope, Gate: p.eng.Gate}
	entered, release := make(chan struct{}), make(chan struct{})
	p.eng.hook = func(op, rel string) error {
		if op == "write" {
			close(entered)
			<-release
		}
		return nil
	}
	done := make(chan error)
	go func() {
		_, err := p.eng.Write(context.Background(), "one.txt", "1")
		done <- err
	}()
	<-entered // session one holds the project's slot, mid-write
	ctx, cancel := context.WithCancel(context.Background())
	busy := make(chan error)
	go func() {
		_, err := other.Write(ctx, "two.txt", "2")
		busy <- err
	}()
	for p.eng.Gate.waiting(p.root) != 2 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-busy; codeOf(t, err) != CodeProjectBusy {
		t.Fatalf("waiting session: %v", err)
	}
	if !p.missing("two.txt") {
		t.Fatal("the second session wrote while the first held the gate")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := other.Write(context.Background(), "two.txt", "2"); err != nil {
		t.Fatal(err)
	}
}
