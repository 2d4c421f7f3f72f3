package registry

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/hubdev/hub"

// pkg is one package of the module as `go list` describes it, with its
// tests' imports apart.
type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// listPackages runs `go list` over the whole module.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports", module+"/...")
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("go list: %v", err) // no go tool beside the test binary
	}
	var all []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		all = append(all, p)
	}
	return all
}

// pending are the imports that break the layering today and are being
// moved out (importer → imported, module prefix left off). An entry that
// no longer exists fails the test too, so the list only shrinks.
var pending = map[string]bool{}

// under reports whether path is dir or inside it.
func under(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

// TestLayering locks the shape DESIGN.md draws: arrows only point down.
// Tests count too, but for the supervisor, hubmcp and cmd/hub, whose
// end-to-end tests run the real bridges.
//
//	cmd/hub, hubmcp       the CLI and `hub mcp`: bridges only through registry
//	registry              the one list of bridges
//	supervisor            runs adapters; names none
//	stitchslop aiui       one protocol each; none imports another
//	pixelle geturl
//	adapters, hub/...     shared: never a bridge, never anything above
//
// and inside geturl, the engines that act on a project (files, mutate,
// terminal, staging, search, outline, sandbox, journal, …) never import the
// URL grammar (transport, gateway): the transport turns their errors into
// repair and retry URLs, not the reverse.
func TestLayering(t *testing.T) {
	bridges := New().Names()
	bridgeOf := func(path string) string {
		for _, b := range bridges {
			if under(path, module+"/"+b) {
				return b
			}
		}
		return ""
	}
	shared := []string{module + "/hub", module + "/adapters", module + "/internal", module + "/configs"}
	isShared := func(path string) bool {
		for _, s := range shared {
			if under(path, s) {
				return true
			}
		}
		return false
	}
	geturlEngines := []string{"files", "mutate", "terminal", "staging", "search", "outline", "sandbox", "journal", "discover", "replay", "session"}
	geturlURL := []string{module + "/geturl/transport", module + "/geturl/gateway"}

	seen := map[string]bool{}
	fail := func(p, imp, format string) {
		key := strings.TrimPrefix(p, module+"/") + " → " + strings.TrimPrefix(imp, module+"/")
		if pending[key] {
			seen[key] = true
			return
		}
		t.Errorf(format, p, imp)
	}
	defer func() {
		for key := range pending {
			if !seen[key] {
				t.Errorf("%s is gone: take it off the pending list", key)
			}
		}
	}()
	for _, p := range listPackages(t) {
		self := bridgeOf(p.ImportPath)
		testOnly := map[string]bool{}
		for _, imp := range slices.Concat(p.TestImports, p.XTestImports) {
			testOnly[imp] = !slices.Contains(p.Imports, imp)
		}
		for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			other := bridgeOf(imp)
			switch {
			case isShared(p.ImportPath) && (other != "" || !isShared(imp)):
				fail(p.ImportPath, imp, "%s is shared, yet imports %s")
			case under(p.ImportPath, module+"/supervisor") && other != "" && !testOnly[imp]:
				fail(p.ImportPath, imp, "the supervisor names no bridge, yet %s imports %s")
			case self != "" && other != "" && other != self:
				fail(p.ImportPath, imp, "bridges never import each other: %s imports %s")
			case self != "" && (under(imp, module+"/supervisor") || under(imp, module+"/hubmcp") ||
				under(imp, module+"/cmd") || under(imp, module+"/registry")):
				fail(p.ImportPath, imp, "a bridge imports nothing above it: %s imports %s")
			case (under(p.ImportPath, module+"/hubmcp") || under(p.ImportPath, module+"/cmd")) && other != "" && !testOnly[imp]:
				fail(p.ImportPath, imp, "%s reaches bridges only through the registry, yet imports %s")
			}
			for _, e := range geturlEngines {
				if under(p.ImportPath, module+"/geturl/"+e) && slices.ContainsFunc(geturlURL, func(u string) bool { return under(imp, u) }) {
					fail(p.ImportPath, imp, "geturl's engine %s imports the URL layer %s")
				}
			}
		}
	}
}
