package filechange

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/hub/jsonw"
)

// project is a real project directory with an engine on it, plus a
// sibling directory outside the scope that escape attempts aim at.
type project struct {
	t       testing.TB
	root    string // canonical
	outside string // canonical
	scope   *sandbox.Scope
	ledger  *files.Ledger
	reader  *files.Reader
	eng     *Engine
	clock   *fakeClock
}

func newProject(t testing.TB, tree map[string]string) *project {
	t.Helper()
	root := realDir(t, t.TempDir())
	outside := realDir(t, t.TempDir())
	s, err := sandbox.New(root)
	if err != nil {
		t.Fatal(err)
	}
	p := &project{t: t, root: root, outside: outside, scope: s, ledger: &files.Ledger{}, reader: files.NewReader(s),
		clock: &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}
	p.eng = &Engine{Scope: s, Ledger: p.ledger, Gate: &Gate{}, Edits: NewEditTracker(p.clock.Now)}
	p.writeTree(root, tree)
	return p
}

func realDir(t testing.TB, d string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(d)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// writeTree writes files under dir; a value starting with "->" makes a
// symlink to the rest instead.
func (p *project) writeTree(dir string, tree map[string]string) {
	p.t.Helper()
	for name, body := range tree {
		full := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			p.t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(body, "->"); ok {
			if err := os.Symlink(target, full); err != nil {
				p.t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			p.t.Fatal(err)
		}
	}
}

// read records a complete /r of path in the session's ledger (following
// next pages like an agent would).
func (p *project) read(path string) {
	p.t.Helper()
	start := 0
	for range 1000 {
		res, err := p.reader.Read([]files.Target{{Path: path, Start: start}})
		if err != nil {
			p.t.Fatal(err)
		}
		p.ledger.Record(res)
		f := res.Files[0]
		if f.Error != nil {
			p.t.Fatalf("read %s: %v", path, f.Error)
		}
		if f.Complete || f.NextStartLine == 0 {
			return
		}
		start = f.NextStartLine
	}
	p.t.Fatal("read never completed")
}

// readLines records a read of lines from..to only (following next
// pages within the range).
func (p *project) readLines(path string, from, to int) {
	p.t.Helper()
	for from <= to {
		res, err := p.reader.Read([]files.Target{{Path: path, Start: from, End: to}})
		if err != nil {
			p.t.Fatal(err)
		}
		p.ledger.Record(res)
		f := res.Files[0]
		if f.Error != nil {
			p.t.Fatalf("read %s: %v", path, f.Error)
		}
		if f.NextStartLine == 0 || f.NextStartLine <= from {
			return
		}
		from = f.NextStartLine
	}
}

func (p *project) file(rel string) string {
	p.t.Helper()
	b, err := os.ReadFile(filepath.Join(p.root, rel))
	if err != nil {
		p.t.Fatalf("read %s: %v", rel, err)
	}
	return string(b)
}

func (p *project) missing(rel string) bool {
	_, err := os.Lstat(filepath.Join(p.root, rel))
	return errors.Is(err, fs.ErrNotExist)
}

func (p *project) mode(rel string) fs.FileMode {
	p.t.Helper()
	fi, err := os.Lstat(filepath.Join(p.root, rel))
	if err != nil {
		p.t.Fatal(err)
	}
	return fi.Mode()
}

// codeOf is the errorCode of an engine error ("" for nil).
func codeOf(t testing.TB, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var te *fault.Error
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T) is not a *fault.Error", err, err)
	}
	return te.Code
}

// body is the agent-facing JSON of an error.
func body(t testing.TB, err error) string {
	t.Helper()
	var te *fault.Error
	if !errors.As(err, &te) {
		t.Fatalf("error %v is not a *fault.Error", err)
	}
	b, merr := jsonw.Reflect(nil, te)
	if merr != nil {
		t.Fatal(merr)
	}
	return string(b)
}

// noHostPath fails when s names the project or outside directory on the
// host.
func (p *project) noHostPath(what, s string) {
	p.t.Helper()
	for _, h := range []string{p.root, p.outside, os.TempDir()} {
		if strings.Contains(s, h) {
			p.t.Errorf("%s leaks host path %q: %s", what, h, s)
		}
	}
}
