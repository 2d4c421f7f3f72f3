package filechange

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hubdev/hub/hub/jsonw"
	"github.com/rogpeppe/go-internal/txtar"
)

// TestApplyGolden runs every testdata/apply archive: the "in/" files are
// the project, "patch" is applied, "want" is the golden result or refusal
// (-update rewrites it), and the project must then hold exactly the
// "out/" files, or, after a refusal, exactly the "in/" files.
func TestApplyGolden(t *testing.T) {
	names, _ := filepath.Glob("testdata/apply/*.txtar")
	if len(names) == 0 {
		t.Fatal("no golden files")
	}
	for _, name := range names {
		t.Run(strings.TrimSuffix(filepath.Base(name), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(name)
			if err != nil {
				t.Fatal(err)
			}
			in, out := map[string]string{}, map[string]string{}
			var patch string
			wantAt := -1
			for i, f := range ar.Files {
				switch {
				case strings.HasPrefix(f.Name, "in/"):
					in[f.Name[3:]] = string(f.Data)
				case strings.HasPrefix(f.Name, "out/"):
					out[f.Name[4:]] = string(f.Data)
				case f.Name == "patch":
					patch = string(f.Data)
				case f.Name == "want":
					wantAt = i
				}
			}
			p := newProject(t, in)
			res, err := p.eng.ApplyPatch(context.Background(), patch)
			var got []byte
			if err != nil {
				b, merr := jsonw.Reflect(nil, err)
				if merr != nil {
					t.Fatal(merr)
				}
				var buf bytes.Buffer
				json.Indent(&buf, b, "", "  ")
				got = append(buf.Bytes(), '\n')
				out = in
			} else {
				got, _ = json.MarshalIndent(res, "", "  ")
				got = append(got, '\n')
			}
			if isErr := strings.HasPrefix(filepath.Base(name), "err_"); isErr != (err != nil) {
				t.Errorf("err_ prefix says error=%v, got %s", isErr, got)
			}
			p.noHostPath("answer", string(got))
			if tree := regularFiles(t, p.root); !sameMap(tree, out) {
				t.Errorf("project holds\n%q\nwant\n%q", tree, out)
			}
			if *update {
				if wantAt < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "want"})
					wantAt = len(ar.Files) - 1
				}
				ar.Files[wantAt].Data = got
				if err := os.WriteFile(name, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if wantAt < 0 {
				t.Fatal("no want file (run with -update)")
			}
			if want := ar.Files[wantAt].Data; !bytes.Equal(got, want) {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// regularFiles maps every regular file under root to its contents; any
// other leftover (a temporary or backup file) shows up as a file too.
func regularFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		out[rel] = string(b)
		return nil
	})
	return out
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	ka := make([]string, 0, len(a))
	for k := range a {
		ka = append(ka, k)
	}
	sort.Strings(ka)
	for _, k := range ka {
		if v, ok := b[k]; !ok || v != a[k] {
			return false
		}
	}
	return true
}
