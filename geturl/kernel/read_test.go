package kernel

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

type readResult struct {
	OK              bool     `json:"ok"`
	Truncated       bool     `json:"truncated"`
	Next            string   `json:"next"`
	RequestedPaths  []string `json:"requestedPaths"`
	ReturnedPaths   []string `json:"returnedPaths"`
	AllComplete     bool     `json:"allComplete"`
	CompletePaths   []string `json:"completePaths"`
	IncompletePaths []string `json:"incompletePaths"`
	UnreturnedPaths []string `json:"unreturnedPaths"`
	Files           []struct {
		Path          string `json:"path"`
		Content       string `json:"content"`
		StartLine     int    `json:"startLine"`
		EndLine       int    `json:"endLine"`
		Complete      bool   `json:"complete"`
		Truncated     bool   `json:"truncated"`
		NextStartLine int    `json:"nextStartLine"`
		Fingerprint   string `json:"fingerprint"`
		Error         *struct {
			Code string `json:"code"`
		} `json:"error"`
	} `json:"files"`
}

func numbered(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %04d %s\n", prefix, i, strings.Repeat("x", 60))
	}
	return b.String()
}

func eq(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

func TestReadOneAndMany(t *testing.T) {
	p := newProject(t, map[string]string{
		"src/a.ts": "export const a = 1;\n", "src/b.ts": "b\n", "README.md": "# hi\n",
	})
	var r readResult
	p.ok("/r?path=src/a.ts", &r)
	if !r.OK || r.Truncated || r.Next != "" || !r.AllComplete || len(r.Files) != 1 || r.Files[0].Content != "export const a = 1;\n" {
		t.Fatalf("%+v", r)
	}
	if !eq(r.RequestedPaths, []string{"/project/src/a.ts"}) || !eq(r.CompletePaths, []string{"/project/src/a.ts"}) {
		t.Fatalf("%+v", r)
	}
	r = readResult{}
	p.ok("/r?path=src/a.ts&path=/project/src/b.ts&path=missing.txt&path="+url.PathEscape(p.root)+"/README.md", &r)
	if r.AllComplete || !eq(r.UnreturnedPaths, []string{"/project/missing.txt"}) ||
		!eq(r.ReturnedPaths, []string{"/project/src/a.ts", "/project/src/b.ts", "/project/README.md"}) ||
		r.Files[2].Error == nil || r.Files[2].Error.Code != "path_not_found" || r.Files[3].Content != "# hi\n" {
		t.Fatalf("%+v", r)
	}
	r = readResult{}
	p.ok("/r?file=src/b.ts", &r)
	if r.Files[0].Content != "b\n" {
		t.Fatal("file= alias")
	}
	if e := p.fail("/r?path=src/a.ts&file=src/b.ts", transport.CodeConflictingParams); e.Repair != readBase+"/r?path=src/a.ts&path=src/b.ts" {
		t.Fatalf("repair %q", e.Repair)
	}
	p.fail("/r?"+strings.Repeat("path=a&", 9), transport.CodeTooManyValues)
	p.fail("/r", transport.CodeMissingParameter)
	p.fail("/r?path=a&pth=b", transport.CodeUnknownParameter)
}

// TestReadPagination follows exact next URLs: a single large file and a
// multi-read of two large ones come back whole, page by page, and the
// ledger then holds complete coverage of each.
func TestReadPagination(t *testing.T) {
	big1, big2 := numbered("one", 1200), numbered("two", 900)
	p := newProject(t, map[string]string{"big1.txt": big1, "dir/big2.txt": big2, "small.txt": "s\n"})
	for _, start := range []string{"/r?path=big1.txt", "/r?path=big1.txt&path=small.txt&path=dir/big2.txt"} {
		got := map[string]string{}
		target := start
		pages := 0
		for target != "" {
			if pages++; pages > 50 {
				t.Fatal("pagination does not end")
			}
			var r readResult
			p.ok(target, &r)
			for _, f := range r.Files {
				got[f.Path] += f.Content
			}
			if r.Truncated != (r.Next != "") {
				t.Fatalf("truncated %v with next %q", r.Truncated, r.Next)
			}
			if r.Next != "" && !strings.HasPrefix(r.Next, readBase+"/r?path=/project/") {
				t.Fatalf("next %q", r.Next)
			}
			target = strings.TrimPrefix(r.Next, readBase)
		}
		if pages < 2 || got["/project/big1.txt"] != big1 {
			t.Fatalf("%s: %d pages, big1 %d bytes", start, pages, len(got["/project/big1.txt"]))
		}
		if strings.Contains(start, "big2") && (got["/project/dir/big2.txt"] != big2 || got["/project/small.txt"] != "s\n") {
			t.Fatalf("multi-read pages do not reconstruct")
		}
	}
	fp := files.Fingerprint([]byte(big1))
	if !p.s.led.Complete(filepath.Join(p.root, "big1.txt"), fp) {
		t.Fatal("coverage incomplete after following next")
	}
}

// A line longer than a page (a minified bundle) is read in pieces: next
// continues it with skip=, the pieces reconstruct it, and following next
// to the end is complete coverage, so /w can replace the file.
func TestReadLongLineInPieces(t *testing.T) {
	long := strings.Repeat("é", 30_000) + strings.Repeat("x", 40_001) + "\nend\n"
	p := newProject(t, map[string]string{"min.js": long})
	var got string
	pieces := 0
	for target := "/r?path=min.js"; target != ""; pieces++ {
		if pieces > 10 {
			t.Fatal("pieces do not end")
		}
		var r readResult
		p.ok(target, &r)
		got += r.Files[0].Content
		if r.Truncated && !strings.Contains(r.Next, "&skip=") {
			t.Fatalf("next %q does not continue the line", r.Next)
		}
		target = strings.TrimPrefix(r.Next, readBase)
	}
	if got != long || pieces < 4 {
		t.Fatalf("%d pieces reconstruct %d of %d bytes", pieces, len(got), len(long))
	}
	if !p.s.led.Complete(filepath.Join(p.root, "min.js"), files.Fingerprint([]byte(long))) {
		t.Fatal("coverage incomplete after following next through a long line")
	}
}

func TestReadLineRanges(t *testing.T) {
	p := newProject(t, map[string]string{"a.txt": numbered("a", 50), "b.txt": numbered("b", 50)})
	line := func(prefix string, from, to int) string {
		all := strings.SplitAfter(numbered(prefix, 50), "\n")
		return strings.Join(all[from-1:to], "")
	}
	for _, c := range []struct {
		target string
		want   []string
	}{
		{"/r?path=a.txt&start=3&end=5", []string{line("a", 3, 5)}},
		{"/r?path=a.txt&start=3&lines=2", []string{line("a", 3, 4)}},
		{"/r?path=a.txt&lines=2", []string{line("a", 1, 2)}},
		{"/r?start=10&end=11&path=a.txt", []string{line("a", 10, 11)}},
		{"/r?path=a.txt&start=3&end=3&path=b.txt&start=7&end=8", []string{line("a", 3, 3), line("b", 7, 8)}},
		{"/r?path=a.txt&path=b.txt&start=49", []string{line("a", 1, 50), line("b", 49, 50)}},
		{"/r?start=2&end=2&path=a.txt&path=b.txt&end=1", []string{line("a", 2, 2), line("b", 1, 1)}},
	} {
		var r readResult
		p.ok(c.target, &r)
		for i, w := range c.want {
			if r.Files[i].Content != w {
				t.Errorf("%s: file %d = %q, want %q", c.target, i, r.Files[i].Content, w)
			}
		}
	}
	p.fail("/r?path=a.txt&end=5&lines=3", transport.CodeAmbiguousRange)
	p.fail("/r?path=a.txt&start=5&start=6", transport.CodeConflictingParams)
	p.fail("/r?start=1&path=a.txt&start=2", transport.CodeConflictingParams)
	p.fail("/r?path=a.txt&skip=0&skip=3", transport.CodeConflictingParams) // 0 is a value too
	p.fail("/r?skip=0&path=a.txt&skip=2", transport.CodeConflictingParams)
	p.fail("/r?path=a.txt&start=9&end=3", transport.CodeInvalidParameter)
	p.fail("/r?path=a.txt&start=0", transport.CodeValueOutOfRange)
	var r readResult
	p.ok("/r?path=a.txt&start=999", &r)
	if r.Files[0].Error == nil || r.AllComplete {
		t.Fatalf("start past end: %+v", r.Files[0])
	}
}

// TestSandboxEscapesThroughRoutes uses real symlinks and traversal against
// /r and /t: nothing outside the project is read, described, or named.
func TestSandboxEscapesThroughRoutes(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("TOP SECRET\n"), 0o600)
	p := newProject(t, map[string]string{
		"ok.txt": "fine\n", "link-in.txt": "->ok.txt", "link-out.txt": "->" + filepath.Join(outside, "secret.txt"),
		"dir-out": "->" + outside, "sub/up": "->../..", "sub/x.txt": "x\n",
	})
	for _, path := range []string{
		"../" + filepath.Base(outside) + "/secret.txt", "/project/../secret.txt", "sub/../../secret.txt",
		filepath.Join(outside, "secret.txt"), "link-out.txt", "dir-out/secret.txt", "sub/up/" + filepath.Base(outside) + "/secret.txt",
		"/etc/passwd", "..", "/project/..",
	} {
		// an outside path the agent wrote itself may be echoed; a link
		// must never reveal where it points
		revealed := func(s string) bool { return !strings.Contains(path, outside) && strings.Contains(s, outside) }
		body, err := p.call("/r?path=" + transport.Encode(path))
		if strings.Contains(body, "SECRET") || revealed(body) || strings.Contains(body, "root:") {
			t.Fatalf("%s leaked: %s", path, body)
		}
		if err == nil && !strings.Contains(body, `"unreturnedPaths":["`) {
			t.Fatalf("%s: read something: %s", path, body)
		}
		tb, terr := p.call("/t?path=" + transport.Encode(path))
		if revealed(tb) {
			t.Fatalf("/t %s leaked: %s", path, tb)
		}
		_ = terr
	}
	var r readResult
	p.ok("/r?path=link-in.txt&path="+transport.Encode(filepath.Join(p.root, "sub", "x.txt")), &r)
	if r.Files[0].Content != "fine\n" || r.Files[1].Path != "/project/sub/x.txt" {
		t.Fatalf("inside links and native absolute paths: %+v", r)
	}
	// /t describes an outside link as a link without naming its target
	body := p.ok("/t?path=link-out.txt", nil)
	if !strings.Contains(body, `"kind":"symlink"`) || !strings.Contains(body, `"targetKind":"outside"`) {
		t.Fatalf("%s", body)
	}
	e := p.fail("/t?path=../x", "path_traversal")
	if e.Retryable {
		t.Fatal("an escape is not retryable")
	}
	p.fail("/t?path=nope", "path_not_found")
	body = p.ok("/t?file=ok.txt", nil)
	if !strings.Contains(body, `"path":"/project/ok.txt","kind":"file","size":5`) {
		t.Fatalf("%s", body)
	}
}

func TestHeadRecordsNoCoverage(t *testing.T) {
	p := newProject(t, map[string]string{"a.txt": "a\n"})
	tg, _ := transport.ParseTarget("/r?path=a.txt")
	rt, _ := p.k.Route("/r")
	c := &route.Call{Session: p.s, Bases: route.Bases{Read: readBase}, On: route.ReadBase, Route: rt, Head: true}
	if _, err := p.k.Serve(context.Background(), c, tg); err != nil {
		t.Fatal(err)
	}
	if p.s.led.Complete(filepath.Join(p.root, "a.txt"), files.Fingerprint([]byte("a\n"))) {
		t.Fatal("HEAD recorded coverage")
	}
	p.ok("/r?path=a.txt", nil)
	if !p.s.led.Complete(filepath.Join(p.root, "a.txt"), files.Fingerprint([]byte("a\n"))) {
		t.Fatal("GET did not record coverage")
	}
}

// TestReadRepairsAreServed: every repair URL /r offers is served when
// fetched as returned, line ranges included (a fixed typo of start= must
// not land on a range the route then refuses).
func TestReadRepairsAreServed(t *testing.T) {
	p := newProject(t, map[string]string{"a.txt": numbered("a", 5)})
	for _, target := range []string{
		"/r?path=a.txt&start=1&strt=2",          // start twice once repaired
		"/r?path=a.txt&end=1&lines=1&strt=1",    // end with lines
		"/r?path=a.txt&start=3&ned=2",           // end before start
		"/r?path=a.txt&start=2&path=a.txt&ned=", // dropped placeholder: fine
	} {
		_, err := p.call(target)
		if err == nil {
			t.Fatalf("%s: accepted", target)
		}
		if err.Repair == "" {
			continue
		}
		if _, rerr := p.call(strings.TrimPrefix(err.Repair, readBase)); rerr != nil {
			t.Errorf("%s: repair %s is refused: %v", target, err.Repair, rerr)
		}
	}
}
