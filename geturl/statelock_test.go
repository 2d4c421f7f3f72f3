package geturl

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters"
)

// Two geturls on one state dir would share registry.json (each saving its
// own view over the other's changes) and fight over control.json: the
// second took it over, and removed it when it stopped, leaving the CLI
// unable to find the first. The second refuses to start instead.
func TestOneServerPerStateDir(t *testing.T) {
	b := startBridge(t, nil)
	cfg := NewConfig()
	cfg.Port, cfg.ControlPort = 0, 0
	dirs := b.Dirs
	run, err := adapters.Standalone{Name: "geturl", Adapter: New(cfg), Log: slog.New(slog.DiscardHandler),
		Dirs: &dirs, ReadyTimeout: 10 * time.Second}.Start(context.Background())
	if err == nil {
		run.Stop()
		run.Wait()
		t.Fatal("a second geturl started on the same state dir")
	}
	if !strings.Contains(err.Error(), "already") {
		t.Errorf("refusal %q does not say another geturl serves the state dir", err)
	}
	// The first still serves the CLI.
	cl, err := Locate(b.Dirs)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Do(context.Background(), http.MethodGet, "/api/status", nil, nil); err != nil {
		t.Fatalf("the first control plane after the refused second: %v", err)
	}
}
