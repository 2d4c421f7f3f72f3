package extension

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

type manifest struct {
	ManifestVersion int      `json:"manifest_version"`
	Name            string   `json:"name"`
	Version         string   `json:"version"`
	Permissions     []string `json:"permissions"`
	HostPermissions []string `json:"host_permissions"`
	Background      struct {
		ServiceWorker string `json:"service_worker"`
		Type          string `json:"type"`
	} `json:"background"`
	Action struct {
		DefaultPopup string `json:"default_popup"`
	} `json:"action"`
	CSP struct {
		ExtensionPages string `json:"extension_pages"`
	} `json:"content_security_policy"`
	ContentScripts         []json.RawMessage `json:"content_scripts"`
	WebAccessibleResources []json.RawMessage `json:"web_accessible_resources"`
	ExternallyConnectable  json.RawMessage   `json:"externally_connectable"`
}

func readManifest(t *testing.T) manifest {
	t.Helper()
	b, err := fs.ReadFile(FS(), "manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var m manifest
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	return m
}

// The manifest is MV3 and asks for exactly what the companion uses: its
// storage, injecting the prompt into the tab the user chose, and the
// loopback control plane. No page can message it, load its files or get a
// content script it did not ask for.
func TestManifest(t *testing.T) {
	m := readManifest(t)
	if m.ManifestVersion != 3 {
		t.Fatalf("manifest_version %d, want 3", m.ManifestVersion)
	}
	if m.Name != Name() || m.Name == "" || m.Version == "" {
		t.Fatalf("name %q (Name() %q), version %q", m.Name, Name(), m.Version)
	}
	perms := slices.Sorted(slices.Values(m.Permissions))
	if want := []string{"activeTab", "scripting", "storage"}; !slices.Equal(perms, want) {
		t.Fatalf("permissions %q, want exactly %q", perms, want)
	}
	if want := []string{"http://127.0.0.1/*"}; !slices.Equal(m.HostPermissions, want) {
		t.Fatalf("host_permissions %q, want exactly %q", m.HostPermissions, want)
	}
	if m.Background.ServiceWorker != "background.js" || m.Background.Type != "" {
		t.Fatalf("background %+v, want the classic service worker background.js", m.Background)
	}
	if m.Action.DefaultPopup != "popup.html" {
		t.Fatalf("popup %q", m.Action.DefaultPopup)
	}
	if m.ContentScripts != nil || m.WebAccessibleResources != nil || m.ExternallyConnectable != nil {
		t.Fatal("the manifest declares content scripts, web-accessible resources or external connections")
	}
	csp := m.CSP.ExtensionPages
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "object-src 'none'", "connect-src http://127.0.0.1:*"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	for _, bad := range []string{"unsafe-", "http:", "https:", "*.", "data:", "blob:"} {
		if strings.Contains(strings.ReplaceAll(csp, "connect-src http://127.0.0.1:*", ""), bad) {
			t.Errorf("CSP %q allows %q", csp, bad)
		}
	}
}

// Every file the manifest and the popup name is embedded, and every
// extension file in the source directory is embedded (a file added but not
// listed in the go:embed line would be missing from an export).
func TestEveryReferencedFileIsEmbedded(t *testing.T) {
	m := readManifest(t)
	refs := []string{m.Background.ServiceWorker, m.Action.DefaultPopup}
	popup, err := fs.ReadFile(FS(), "popup.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(string(popup), -1) {
		refs = append(refs, g[1])
	}
	bg, _ := fs.ReadFile(FS(), "background.js")
	for _, g := range regexp.MustCompile(`files: \["([^"]+)"\]`).FindAllStringSubmatch(string(bg), -1) {
		refs = append(refs, g[1])
	}
	if !slices.Contains(refs, "popup.js") || !slices.Contains(refs, "popup.css") || !slices.Contains(refs, "inject.js") {
		t.Fatalf("references found: %q", refs)
	}
	for _, r := range refs {
		if strings.Contains(r, ":") || strings.HasPrefix(r, "/") {
			t.Errorf("%q is not a file of the extension (remote or absolute)", r)
			continue
		}
		if _, err := fs.Stat(FS(), r); err != nil {
			t.Errorf("%q is referenced but not embedded: %v", r, err)
		}
	}
	src, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range src {
		n := e.Name()
		if e.IsDir() || strings.HasSuffix(n, ".go") || strings.HasPrefix(n, ".") || n == "README.md" {
			continue
		}
		if !slices.Contains(Names(), n) {
			t.Errorf("%s is in the extension's directory but not embedded", n)
		}
	}
}

// No script loads or evaluates code: everything runs from the package.
func TestNoRemoteOrEvaluatedCode(t *testing.T) {
	for _, n := range Names() {
		if !strings.HasSuffix(n, ".js") && !strings.HasSuffix(n, ".html") {
			continue
		}
		b, _ := fs.ReadFile(FS(), n)
		for _, bad := range []string{"eval(", "new Function", "importScripts", "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "https://", "<script>"} {
			if bytes.Contains(b, []byte(bad)) {
				t.Errorf("%s contains %q", n, bad)
			}
		}
	}
}

// The secret stays in the service worker: the popup and the content
// script never touch the storage that holds it, and the worker's view for
// the popup has no secret field.
func TestSecretStaysInTheWorker(t *testing.T) {
	for _, n := range []string{"popup.js", "inject.js", "popup.html"} {
		b, _ := fs.ReadFile(FS(), n)
		for _, bad := range []string{".secret", "chrome.storage", "Authorization"} {
			if bytes.Contains(b, []byte(bad)) {
				t.Errorf("%s mentions %q", n, bad)
			}
		}
	}
	bg, _ := fs.ReadFile(FS(), "background.js")
	view := string(bg)
	view = view[strings.Index(view, "function view()"):]
	view = view[:strings.Index(view, "\n}\n")]
	if strings.Contains(view, "secret") {
		t.Fatalf("the popup's view includes the secret:\n%s", view)
	}
}

// node --check parses every script (node is on CI's PATH).
func TestScriptsParse(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but node is not on PATH")
		}
		t.Skip("node not on PATH")
	}
	dir := t.TempDir()
	if err := Export(dir); err != nil {
		t.Fatal(err)
	}
	for _, n := range Names() {
		if !strings.HasSuffix(n, ".js") {
			continue
		}
		if out, err := exec.Command(node, "--check", filepath.Join(dir, n)).CombinedOutput(); err != nil {
			t.Errorf("node --check %s: %v\n%s", n, err, out)
		}
	}
}

// checkTree asserts dir holds exactly the embedded files, byte for byte,
// 0644 (on unix).
func checkTree(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, Names()) {
		t.Fatalf("exported %q, want %q", got, Names())
	}
	for _, n := range Names() {
		want, _ := fs.ReadFile(FS(), n)
		p := filepath.Join(dir, n)
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(b, want) {
			t.Fatalf("%s differs from the embedded file (%v)", n, err)
		}
		fi, _ := os.Lstat(p)
		if runtime.GOOS != "windows" && fi.Mode() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", n, fi.Mode())
		}
	}
}

func TestExport(t *testing.T) {
	plant := func(name, content string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string) // nil: dir does not exist
		refuse  string                         // "" accepts
	}{
		{name: "a new directory and its parents"},
		{name: "an empty directory", prepare: func(t *testing.T, dir string) { os.MkdirAll(dir, 0o755) }},
		{name: "a previous export", prepare: func(t *testing.T, dir string) {
			if err := Export(dir); err != nil {
				t.Fatal(err)
			}
			plant("popup.js", "// an older version\n")(t, dir)
		}},
		{name: "a previous export missing a file", prepare: func(t *testing.T, dir string) {
			Export(dir)
			os.Remove(filepath.Join(dir, "inject.js"))
		}},
		{name: "a directory with other files", prepare: func(t *testing.T, dir string) {
			os.MkdirAll(dir, 0o755)
			plant("notes.txt", "mine")(t, dir)
		}, refuse: "notes.txt"},
		{name: "an export with a file added", prepare: func(t *testing.T, dir string) {
			Export(dir)
			plant("evil.js", "x")(t, dir)
		}, refuse: "evil.js"},
		{name: "another extension", prepare: func(t *testing.T, dir string) {
			os.MkdirAll(dir, 0o755)
			plant("manifest.json", `{"manifest_version":3,"name":"something else","version":"1"}`)(t, dir)
			plant("popup.js", "mine")(t, dir)
		}, refuse: "manifest.json is not the companion's"},
		{name: "our files without a manifest", prepare: func(t *testing.T, dir string) {
			os.MkdirAll(dir, 0o755)
			plant("popup.js", "mine")(t, dir)
		}, refuse: "not a previous export"},
		{name: "a subdirectory", prepare: func(t *testing.T, dir string) {
			Export(dir)
			os.Mkdir(filepath.Join(dir, "icons"), 0o755)
		}, refuse: "icons"},
		{name: "a file, not a directory", prepare: func(t *testing.T, dir string) {
			os.MkdirAll(filepath.Dir(dir), 0o755)
			os.WriteFile(dir, []byte("x"), 0o644)
		}, refuse: "not a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "a", "companion")
			if tc.prepare != nil {
				tc.prepare(t, dir)
			}
			before := snapshot(dir)
			err := Export(dir)
			if tc.refuse == "" {
				if err != nil {
					t.Fatalf("Export: %v", err)
				}
				checkTree(t, dir)
				if fi, _ := os.Stat(dir); runtime.GOOS != "windows" && tc.prepare == nil && fi.Mode().Perm() != 0o755 {
					t.Errorf("created directory mode %v, want 0755", fi.Mode().Perm())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.refuse) {
				t.Fatalf("Export = %v, want a refusal naming %q", err, tc.refuse)
			}
			if after := snapshot(dir); after != before {
				t.Fatalf("a refused export changed the directory:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// A symlink another user planted in a previous export is refused, never
// followed: the file it points at is untouched.
func TestExportRefusesSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	dir := filepath.Join(t.TempDir(), "companion")
	if err := Export(dir); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	os.Remove(filepath.Join(dir, "popup.js"))
	if err := os.Symlink(victim, filepath.Join(dir, "popup.js")); err != nil {
		t.Fatal(err)
	}
	if err := Export(dir); err == nil || !strings.Contains(err.Error(), "popup.js") {
		t.Fatalf("Export over a planted symlink = %v, want a refusal naming it", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Fatalf("the symlink's target was written: %q", b)
	}
}

// snapshot describes dir's entries and contents, to see a refused export
// changed nothing.
func snapshot(dir string) string {
	var sb strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			sb.WriteString("err " + err.Error() + ";")
			return nil
		}
		b, _ := os.ReadFile(p)
		sb.WriteString(p + "=" + string(b) + ";")
		return nil
	})
	return sb.String()
}

// TestZipHoldsTheExportedFiles: the archive the control page offers is one
// folder holding every file Export writes, byte for byte, and nothing else.
func TestZipHoldsTheExportedFiles(t *testing.T) {
	var buf bytes.Buffer
	if err := Zip(&buf); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range zr.File {
		name, ok := strings.CutPrefix(f.Name, ZipDir+"/")
		if !ok || strings.Contains(name, "/") {
			t.Fatalf("%q is not a file directly in %s/", f.Name, ZipDir)
		}
		if f.Mode() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", f.Name, f.Mode())
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		want, err := fs.ReadFile(FS(), name)
		if err != nil || !bytes.Equal(b, want) {
			t.Errorf("%s differs from the embedded file (%v)", name, err)
		}
		got = append(got, name)
	}
	if !slices.Equal(got, Names()) {
		t.Errorf("zip holds %v, want %v", got, Names())
	}
}
