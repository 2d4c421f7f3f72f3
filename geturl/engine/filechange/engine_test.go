package filechange

import (
	"context"
	"fmt"
	"strings"
	"sync"
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

// TestConcurrentSessionsLoseNoEdit: two sessions' engines edit one file
// from many goroutines at once; because each edit reads and writes under
// the project's gate, every edit lands (no lost update).
func TestConcurrentSessionsLoseNoEdit(t *testing.T) {
	const n = 24
	var tree strings.Builder
	for i := range n {
		fmt.Fprintf(&tree, "slot %02d: empty\n", i)
	}
	p := newProject(t, map[string]string{"shared.txt": tree.String()})
	sessions := []*Engine{p.eng, {Scope: p.scope, Gate: p.eng.Gate}}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			old := fmt.Sprintf("slot %02d: empty", i)
			if _, err := sessions[i%2].Edit(context.Background(), "shared.txt", old, old[:8]+" full"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := strings.Count(p.file("shared.txt"), "full"); got != n {
		t.Fatalf("%d of %d edits survived:\n%s", got, n, p.file("shared.txt"))
	}
}
