package kernel

import (
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/transport"
)

func TestProject(t *testing.T) {
	p := newProject(t, map[string]string{
		"package.json": `{"name":"demo","scripts":{"dev":"vite","test":"vitest run"}}`,
		"go.mod":       "module example.com/demo\n\ngo 1.26\n",
		"Makefile":     "build:\n\tgo build ./...\ntest: build\n\tgo test ./...\n",
	})
	p.k = New(Options{NoVersions: true})
	var a struct {
		OK      bool   `json:"ok"`
		Root    string `json:"root"`
		Markers []string
		Tools   []struct {
			Name  string
			Found bool
		}
		PackageJSON struct {
			Scripts []struct{ Name, Command string }
		} `json:"packageJson"`
		GoMod       struct{ Module string } `json:"goMod"`
		MakeTargets []string                `json:"makeTargets"`
	}
	body := p.ok("/p", &a)
	if a.Root != "/project" || a.GoMod.Module != "example.com/demo" || len(a.PackageJSON.Scripts) != 2 ||
		a.PackageJSON.Scripts[0].Name != "dev" || strings.Join(a.MakeTargets, ",") != "build,test" || len(a.Tools) == 0 {
		t.Fatalf("%s", body)
	}
	if strings.Contains(body, "/usr/") || strings.Contains(body, "/bin/") {
		t.Fatalf("tool locations leaked: %s", body)
	}
	p.fail("/p?verbose=1", transport.CodeUnknownParameter)
}
