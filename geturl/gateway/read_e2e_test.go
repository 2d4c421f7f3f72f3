package gateway

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/engine/replay"
	"github.com/hubdev/hub/geturl/route"
)

// TestReadEndToEnd reads through the gateway as a tunnel delivers it: on
// the public origin, a large file whose answer leads with rangeFallback and
// whose exact next URLs (on the public origin too) page through the file.
func TestReadEndToEnd(t *testing.T) {
	dir := t.TempDir()
	var big strings.Builder
	for i := range 2000 {
		big.WriteString(strings.Repeat("é", i%50) + " line\n")
	}
	os.WriteFile(filepath.Join(dir, "big.txt"), []byte(big.String()), 0o644)
	os.Symlink("/etc", filepath.Join(dir, "etc"))
	e := newEnv(t)
	e.publicOrigin = "https://abc.trycloudflare.com"
	s := newSession(t, dir, route.Permissions{}, "A")
	e.table.Add(s)
	host := "abc.trycloudflare.com"
	base := e.publicOrigin + "/v0/" + s.Token(route.CapRead)

	target := "/v0/" + s.Token(route.CapRead) + "/r?path=big.txt"
	var content strings.Builder
	for pages := 0; target != ""; pages++ {
		if pages > 20 {
			t.Fatal("pagination does not end")
		}
		r := e.get(target, host)
		var a struct {
			RangeFallback *struct{ First string } `json:"rangeFallback"`
			Next          string                  `json:"next"`
			Files         []struct{ Content string }
		}
		if err := json.Unmarshal([]byte(r.body), &a); err != nil {
			t.Fatal(err)
		}
		if a.RangeFallback == nil || !strings.HasPrefix(a.RangeFallback.First, base+"/z?id=") {
			t.Fatalf("page %d: no rangeFallback on the public origin: %.300s", pages, r.body)
		}
		// the stored answer is reachable part by part
		rr := e.get(strings.TrimPrefix(a.RangeFallback.First, e.publicOrigin), host)
		if meta, _, err := replay.Parse([]byte(rr.body)); err != nil || !strings.HasPrefix(meta.Next, base+"/z?id=") {
			t.Fatalf("range: %v %+v", err, meta)
		}
		content.WriteString(a.Files[0].Content)
		if a.Next != "" && !strings.HasPrefix(a.Next, base+"/r?") {
			t.Fatalf("next %q", a.Next)
		}
		target = strings.TrimPrefix(a.Next, e.publicOrigin)
	}
	if content.String() != big.String() {
		t.Fatal("pages do not reconstruct the file")
	}
	r := e.get("/v0/"+s.Token(route.CapRead)+"/r?path=etc/passwd", host)
	if strings.Contains(r.body, "root:") || !strings.Contains(r.body, `"unreturnedPaths":["/project/etc/passwd"]`) {
		t.Fatalf("symlink escape: %s", r.body)
	}
	if strings.Contains(r.body, dir) {
		t.Fatal("host path leaked")
	}
}

func TestInitByPermissions(t *testing.T) {
	e := newEnv(t, withMutationStubs)
	for _, c := range []struct {
		perm     route.Permissions
		hasM     bool
		has, not []string
	}{
		{route.Permissions{}, false, []string{"read", "plugins"}, []string{"write", "terminal", "stage", "result"}},
		{route.Permissions{Terminal: true}, true, []string{"terminal", "stage", "result"}, []string{"write", "edit", "apply_patch"}},
		{route.Permissions{Write: true}, true, []string{"write", "edit", "apply_patch", "stage"}, []string{"terminal"}},
	} {
		s := newSession(t, t.TempDir(), c.perm, "P")
		e.table.Add(s)
		for _, pre := range []string{"/v0/init/", "/v0/bootstrap/"} {
			r := e.get(pre + s.Token(route.CapInit))
			var ic struct {
				Bases     map[string]string    `json:"bases"`
				Endpoints map[string][2]string `json:"endpoints"`
				Perm      map[string]bool      `json:"permissions"`
				Rules     []string             `json:"rules"`
			}
			if err := json.Unmarshal([]byte(r.body), &ic); err != nil {
				t.Fatal(err)
			}
			if _, ok := ic.Bases["m"]; ok != c.hasM {
				t.Fatalf("%+v: bases %v", c.perm, ic.Bases)
			}
			for _, n := range c.has {
				if _, ok := ic.Endpoints[n]; !ok {
					t.Fatalf("%+v: no %s in %v", c.perm, n, ic.Endpoints)
				}
			}
			for _, n := range c.not {
				if _, ok := ic.Endpoints[n]; ok {
					t.Fatalf("%+v: %s advertised", c.perm, n)
				}
			}
			if ic.Perm["write"] != c.perm.Write || ic.Perm["terminal"] != c.perm.Terminal || !ic.Perm["read"] {
				t.Fatalf("permissions %v", ic.Perm)
			}
			for _, banned := range []string{"Claude", "GPT", "OpenAI", "Anthropic", "Gemini"} {
				if strings.Contains(r.body, banned) {
					t.Fatalf("init is not model-neutral: %s", banned)
				}
			}
		}
		e.table.Remove(s)
	}
}
