package kernel

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/engine/replay"
	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
	"github.com/hubdev/hub/hub/jsonw"
)

type testSession struct {
	scope *sandbox.Scope
	perm  route.Permissions
	store *replay.Store
	led   *files.Ledger
}

func (s *testSession) Scope() *sandbox.Scope          { return s.scope }
func (s *testSession) Permissions() route.Permissions { return s.perm }
func (s *testSession) Replay() *replay.Store          { return s.store }
func (s *testSession) Coverage() route.Coverage       { return s.led }

const readBase = "https://t.example/v0/RRRRRRRR"

// project is a temp project with files written from a map (path → content;
// a value starting with "->" makes a symlink to the rest).
type project struct {
	t    *testing.T
	root string
	k    *Kernel
	s    *testSession
}

func newProject(t *testing.T, tree map[string]string) *project {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, tree)
	sc, err := sandbox.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return &project{t: t, root: sc.Root(), k: New(Options{}),
		s: &testSession{scope: sc, store: replay.New(nil), led: &files.Ledger{}}}
}

func writeTree(t *testing.T, root string, tree map[string]string) {
	t.Helper()
	for p, content := range tree {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if strings.HasSuffix(p, "/") {
			os.MkdirAll(full, 0o755)
			continue
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// call runs one request-target ("/r?path=a") on the read base and returns
// the answer as JSON text (or the range text) and the error.
func (p *project) call(target string) (string, *transport.Error) {
	p.t.Helper()
	tg, err := transport.ParseTarget(target)
	if err != nil {
		return "", err
	}
	path, _, _ := strings.Cut(target, "?")
	rt, ok := p.k.Route(path)
	if !ok {
		p.t.Fatalf("no route %s", path)
	}
	c := &route.Call{Session: p.s, Bases: route.Bases{Read: readBase}, On: route.ReadBase, Route: rt}
	v, terr := p.k.Serve(context.Background(), c, tg)
	if terr != nil {
		b, _ := transport.Marshal(terr)
		p.assertNoHostPath(string(b))
		return "", terr
	}
	if text, ok := v.(route.PlainText); ok {
		return string(text), nil
	}
	b, merr := transport.Marshal(v)
	if merr != nil {
		p.t.Fatal(merr)
	}
	if _, ok := v.(transport.Appender); ok {
		// A hand-written encoder must write what reflection writes.
		if want := reflective(p.t, v); string(b) != want {
			p.t.Fatalf("%s: AppendJSON and encoding/json differ\n got  %s\n want %s", target, b, want)
		}
	}
	p.assertNoHostPath(string(b))
	return string(b), nil
}

// ok runs a call that must succeed and decodes it into v.
func (p *project) ok(target string, v any) string {
	p.t.Helper()
	body, err := p.call(target)
	if err != nil {
		p.t.Fatalf("%s: %v (%s)", target, err, err.Hint)
	}
	if v != nil {
		if jerr := json.Unmarshal([]byte(body), v); jerr != nil {
			p.t.Fatalf("%s: %v", target, jerr)
		}
	}
	return body
}

// fail runs a call that must fail with code.
func (p *project) fail(target, code string) *transport.Error {
	p.t.Helper()
	_, err := p.call(target)
	if err == nil || err.Code != code {
		p.t.Fatalf("%s: got %v, want %s", target, err, code)
	}
	return err
}

// reflective is encoding/json's encoding of v (HTML escaping off), which
// ignores transport.Appender.
func reflective(t *testing.T, v any) string {
	t.Helper()
	b, err := jsonw.Reflect(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (p *project) assertNoHostPath(s string) {
	p.t.Helper()
	if strings.Contains(s, p.root) {
		p.t.Fatalf("answer names the host path %s: %s", p.root, s)
	}
}
