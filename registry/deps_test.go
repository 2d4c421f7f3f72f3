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

// geturlRule is one layering rule inside geturl: what importers under
// from (module-relative, everything under each counts) may import of
// geturl. With allowed set, nothing else; else anything but denied.
type geturlRule struct {
	what            string
	from            []string
	allowed, denied []string
	// tests says whether test imports count (end-to-end tests may build
	// the whole stack above the package they test).
	tests bool
}

// geturlRules lock geturl's layers, bottom up: fault (the error
// vocabulary) and the engines know no URL; the route vocabulary names no
// handler; the handlers never reach back up into the route table or the
// data plane; the plugins see only their contract; the control plane
// sees only the session manager and the route table; the data plane is
// built only by the adapter.
var geturlRules = []geturlRule{
	{what: "fault is the bottom: it imports nothing of geturl",
		from: []string{"geturl/fault"}, allowed: []string{}, tests: true},
	{what: "the engines (everything under geturl/engine) import only engines, fault and geturl/internal: " +
		"the URL layer turns their faults into recovery URLs, not the reverse",
		from: []string{"geturl/engine"}, allowed: []string{"geturl/engine", "geturl/fault", "geturl/internal"}, tests: true},
	{what: "the transport (the URL grammar) imports only fault and geturl/internal",
		from: []string{"geturl/transport"}, allowed: []string{"geturl/fault", "geturl/internal"}, tests: true},
	{what: "the route vocabulary names no handler: the route table imports the handlers",
		from: []string{"geturl/route"}, denied: []string{"geturl/kernel", "geturl/mutation", "geturl/plugin", "geturl/gateway", "geturl/session"}, tests: true},
	{what: "a route handler never imports the route table or the data plane (no handler registers itself back)",
		from: []string{"geturl/mutation", "geturl/plugin/pluginhost"}, denied: []string{"geturl/kernel", "geturl/gateway", "geturl/session"}},
	{what: "a plugin sees only the plugin contract and the engines, never the URL layer or the /k host",
		from:   []string{"geturl/plugin/bridges", "geturl/plugin/hubstatus", "geturl/plugin/opencode"},
		denied: []string{"geturl/transport", "geturl/route", "geturl/kernel", "geturl/mutation", "geturl/gateway", "geturl/session", "geturl/plugin/pluginhost"}, tests: true},
	{what: "the control plane serves the operator: it never reaches the data plane, the engines, the handlers or the plugins " +
		"(projects only through the session manager)",
		from: []string{"geturl/control"}, denied: []string{"geturl/gateway", "geturl/engine", "geturl/mutation", "geturl/plugin", "geturl/transport"}, tests: true},
	{what: "the browser companion (device API and lease) sees only the session manager and the route vocabulary: " +
		"it wraps the token table the data plane asks, never the data plane, the handlers or the control plane",
		from: []string{"geturl/companion"}, allowed: []string{"geturl/session", "geturl/route", "geturl/companion/extension"}},
	{what: "the extension's files are data: their package imports nothing of geturl",
		from: []string{"geturl/companion/extension"}, allowed: []string{}, tests: true},
	{what: "only the adapter (package geturl) builds the data plane",
		from: []string{"geturl/"}, denied: []string{"geturl/gateway"}},
}

// breaks reports whether p importing imp breaks r.
func (r geturlRule) breaks(p, imp string, testOnly bool) bool {
	p, imp = strings.TrimPrefix(p, module+"/"), strings.TrimPrefix(imp, module+"/")
	if testOnly && !r.tests || under(imp, p) || !slices.ContainsFunc(r.from, func(f string) bool {
		return under(p, strings.TrimSuffix(f, "/")) && (!strings.HasSuffix(f, "/") || p != strings.TrimSuffix(f, "/"))
	}) {
		return false
	}
	in := func(dirs []string) bool {
		return slices.ContainsFunc(dirs, func(d string) bool { return under(imp, d) })
	}
	if r.allowed != nil {
		return !in(r.allowed)
	}
	return in(r.denied)
}

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
// and inside geturl, the layers of geturl/README.md (geturlRules).
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
			if !under(imp, module+"/geturl") {
				continue
			}
			for _, r := range geturlRules {
				if r.breaks(p.ImportPath, imp, testOnly[imp]) {
					fail(p.ImportPath, imp, "%s imports %s, yet "+r.what)
				}
			}
		}
	}
}

// TestGeturlRules checks that each of geturl's rules catches what it
// names (the module as it is breaks none of them).
func TestGeturlRules(t *testing.T) {
	m := func(p string) string { return module + "/" + p }
	for _, c := range []struct {
		p, imp   string
		testOnly bool
		broken   bool
	}{
		{"geturl/engine/staging", "geturl/transport", false, true},
		{"geturl/engine/filechange", "geturl/internal/corpus", true, false},
		{"geturl/engine/filechange", "geturl/route", true, true},
		{"geturl/engine/terminal/reaper", "geturl/gateway", false, true},
		{"geturl/engine/intents", "geturl/fault", false, false},
		{"geturl/fault", "geturl/internal/bufpool", false, true},
		{"geturl/transport", "geturl/fault", false, false},
		{"geturl/transport", "geturl/route", false, true},
		{"geturl/route", "geturl/transport", false, false},
		{"geturl/route", "geturl/mutation", false, true},
		{"geturl/mutation", "geturl/kernel", false, true},
		{"geturl/mutation", "geturl/kernel", true, false},
		{"geturl/plugin/pluginhost", "geturl/gateway", false, true},
		{"geturl/plugin/opencode", "geturl/engine/sandbox", false, false},
		{"geturl/plugin/bridges", "geturl/transport", false, true},
		{"geturl/plugin/hubstatus", "geturl/plugin/pluginhost", true, true},
		{"geturl/session", "geturl/gateway", false, true},
		{"geturl/session", "geturl/mutation", false, false},
		{"geturl", "geturl/gateway", false, false},
		{"geturl/control", "geturl/engine/sandbox", false, true},
		{"geturl/control", "geturl/session", false, false},
		{"geturl/companion", "geturl/session", false, false},
		{"geturl/companion", "geturl/control", false, true},
		{"geturl/companion", "geturl/gateway", false, true},
		{"geturl/companion/extension", "geturl/route", false, true},
		{"geturl/gateway", "geturl/gateway/x", false, false},
	} {
		broken := false
		for _, r := range geturlRules {
			broken = broken || r.breaks(m(c.p), m(c.imp), c.testOnly)
		}
		if broken != c.broken {
			t.Errorf("%s → %s (test only %v): broken %v, want %v", c.p, c.imp, c.testOnly, broken, c.broken)
		}
	}
}
