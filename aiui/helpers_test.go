package aiui

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/lxzan/gws"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/aiui/frame"
)

// start runs a backend on an OS-assigned port through the shared harness.
func start(t testing.TB, mutate func(*Config, *Server)) (*adaptertest.Harness, *Server) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Port = 0
	s := New(cfg)
	if mutate != nil {
		mutate(cfg, s)
	}
	h := adaptertest.Start(t, s, adaptertest.Options{})
	return h, s
}

// newKind is New(cfg) run as kind (KindServe, KindMCP).
func newKind(cfg *Config, kind string) *Server {
	s := New(cfg)
	s.Kind = kind
	return s
}

// control returns an authenticated control client from the control file.
func control(t testing.TB, h *adaptertest.Harness) *Client {
	t.Helper()
	c, err := Locate(context.Background(), h.Dirs)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustFrame(t testing.TB, env frame.Envelope, payload []byte) []byte {
	t.Helper()
	b, err := frame.Encode(env, payload)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func helloFrame(t testing.TB, format string) []byte {
	return mustFrame(t, frame.Envelope{V: 1, Kind: "hello", Format: format}, nil)
}

func dataFrame(t testing.TB, thread string, fin bool, payload string) []byte {
	return mustFrame(t, frame.Envelope{V: 1, Kind: "data", ThreadID: thread, Fin: fin}, []byte(payload))
}

// ack reads the next message that has no kind (an ack), collecting pushes.
func ack(t testing.TB, c *adaptertest.WSClient) frame.Response {
	t.Helper()
	for {
		m, err := c.Next(10 * time.Second)
		if err != nil {
			t.Fatalf("waiting for an ack: %v", err)
		}
		if m.Opcode != gws.OpcodeText {
			t.Fatalf("ack is not a text frame: %v", m.Opcode)
		}
		var probe map[string]any
		if err := json.Unmarshal(m.Data, &probe); err != nil {
			t.Fatalf("ack is not JSON: %s", m.Data)
		}
		if _, isPush := probe["kind"]; isPush {
			continue
		}
		var r frame.Response
		json.Unmarshal(m.Data, &r)
		return r
	}
}

func sendAck(t testing.TB, c *adaptertest.WSClient, b []byte) frame.Response {
	t.Helper()
	if err := c.SendBinary(b); err != nil {
		t.Fatal(err)
	}
	return ack(t, c)
}

func records(t testing.TB, h *adaptertest.Harness) []Record {
	return ReadRecord(StateDir(h.Dirs) + "/prompts.jsonl")
}
