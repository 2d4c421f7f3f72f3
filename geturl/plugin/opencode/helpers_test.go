package opencode

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/plugin"
)

// callOK runs a tool through the plugin interface, failing the test on a
// refusal, and decodes the answer.
func callOK(t *testing.T, p plugin.Plugin, auth plugin.Authority, tool, args string) map[string]any {
	t.Helper()
	out, err := callTool(p, auth, tool, args)
	if err != nil {
		t.Fatalf("%s %s: %v", tool, args, err)
	}
	return out
}

// callErr runs a tool that must be refused and returns the refusal.
func callErr(t *testing.T, p plugin.Plugin, auth plugin.Authority, tool, args string) *plugin.Error {
	t.Helper()
	out, err := callTool(p, auth, tool, args)
	if err == nil {
		t.Fatalf("%s %s: want a refusal, got %v", tool, args, out)
	}
	var pe *plugin.Error
	if !errors.As(err, &pe) {
		t.Fatalf("%s %s: want *plugin.Error, got %T %v", tool, args, err, err)
	}
	return pe
}

func callTool(p plugin.Plugin, auth plugin.Authority, tool, args string) (map[string]any, error) {
	if _, err := p.Classify(tool, json.RawMessage(args)); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	raw, err := p.Call(ctx, auth, tool, json.RawMessage(args))
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// dig walks a decoded JSON value by keys and indexes.
func dig(v any, path ...any) any {
	for _, k := range path {
		switch key := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[key]
		case int:
			a, ok := v.([]any)
			if !ok || key >= len(a) {
				return nil
			}
			v = a[key]
		}
	}
	return v
}

func str(v any, path ...any) string {
	s, _ := dig(v, path...).(string)
	return s
}
