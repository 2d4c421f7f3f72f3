package mutation_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/internal/treetest"
	"github.com/hubdev/hub/geturl/mutation"
	"github.com/hubdev/hub/geturl/transport"
)

// Sandbox escapes through every mutation route — traversal, absolute
// outside paths, symlinked files and directories, dangling links, and a
// patch's Add / Update / Delete / Move to — change nothing outside the
// project, and nothing inside it either; the reads of the same paths
// are refused too. Run against every resolver the OS offers.
func TestEscapesThroughEveryRoute(t *testing.T) {
	for _, r := range sandbox.Resolvers() {
		t.Run(r.Name(), func(t *testing.T) { escapesThroughEveryRoute(t, r) })
	}
}

func escapesThroughEveryRoute(t *testing.T, r sandbox.Resolver) {
	e := newEnvOn(t, r, rw, mutation.Options{}, nil)
	writeTree(t, e.outside, map[string]string{"secret.txt": "top secret\n", "dir/": ""})
	writeTree(t, e.root, map[string]string{
		"in.txt":    "inside\n",
		"linkfile":  "->" + filepath.Join(e.outside, "secret.txt"),
		"linkdir":   "->" + e.outside,
		"dangling":  "->" + filepath.Join(e.outside, "made-by-agent.txt"),
		"rellink":   "->../" + filepath.Base(e.outside) + "/secret.txt",
		"sub/deep/": "",
	})
	out, in := treetest.Snapshot(t, e.outside), treetest.Snapshot(t, e.root)
	o := e.outside
	enc := transport.Encode
	patch := func(body string) string {
		return e.m + "/a?wait=1500&raw=" + enc("*** Begin Patch\n"+body+"*** End Patch\n")
	}
	urls := []string{
		e.m + "/w?path=../" + filepath.Base(o) + "/x.txt&wait=1500&raw=x",
		e.m + "/w?path=" + enc(o+"/x.txt") + "&wait=1500&raw=x",
		e.m + "/w?path=/project/../x.txt&wait=1500&raw=x",
		e.m + "/w?path=sub/deep/../../../x.txt&wait=1500&raw=x",
		e.m + "/w?path=linkdir/x.txt&wait=1500&raw=x",
		e.m + "/w?path=linkfile&wait=1500&raw=x",
		e.m + "/w?path=dangling&wait=1500&raw=x",
		e.m + "/w?path=rellink&wait=1500&raw=x",
		e.m + "/e?path=linkfile&old=top&new=pwned&wait=1500",
		e.m + "/e?path=rellink&old=top&new=pwned&wait=1500",
		e.m + "/e?path=" + enc(o+"/secret.txt") + "&old=top&new=pwned&wait=1500",
		e.m + "/e?path=linkdir/secret.txt&old=top&new=pwned&wait=1500",
		patch("*** Add File: ../" + filepath.Base(o) + "/x.txt\n+x\n"),
		patch("*** Add File: " + o + "/x.txt\n+x\n"),
		patch("*** Add File: linkdir/x.txt\n+x\n"),
		patch("*** Add File: dangling\n+x\n"),
		patch("*** Update File: linkfile\n@@\n-top secret\n+pwned\n"),
		patch("*** Update File: linkdir/secret.txt\n@@\n-top secret\n+pwned\n"),
		patch("*** Delete File: linkfile\n"),
		patch("*** Delete File: " + o + "/secret.txt\n"),
		patch("*** Delete File: linkdir/secret.txt\n"),
		patch("*** Update File: in.txt\n*** Move to: ../" + filepath.Base(o) + "/moved.txt\n@@\n-inside\n+moved\n"),
		patch("*** Update File: in.txt\n*** Move to: linkdir/moved.txt\n@@\n-inside\n+moved\n"),
		patch("*** Update File: in.txt\n*** Move to: " + o + "/moved.txt\n@@\n-inside\n+moved\n"),
		// A good section first: the whole patch is refused, so it does not land either.
		patch("*** Update File: in.txt\n@@\n-inside\n+changed\n*** Add File: linkdir/x.txt\n+x\n"),
	}
	// A read answers per file: each of these is refused in its entry.
	reads := []string{"linkfile", "rellink", "linkdir/secret.txt", enc(o + "/secret.txt"), "../" + filepath.Base(o) + "/secret.txt"}
	for _, p := range reads {
		a := e.do(e.r + "/r?path=" + p)
		if strings.Contains(a.raw, "top secret") || !strings.Contains(a.raw, `"error":{"code":`) {
			t.Errorf("/r?path=%s: not refused: %s", p, a.raw)
		}
	}
	for _, u := range urls {
		a := e.do(u)
		if a.OK {
			t.Errorf("%s: accepted: %s", u, a.raw)
			continue
		}
		if strings.Contains(a.raw, "top secret") {
			t.Errorf("%s: leaks outside content: %s", u, a.raw)
		}
		// Whatever recovery URL is offered does not escape either.
		for _, r := range []string{a.Repair, a.Retry} {
			if r != "" {
				if b := e.do(r); b.OK {
					t.Errorf("%s: its recovery URL %s succeeded: %s", u, r, b.raw)
				}
			}
		}
	}
	treetest.Same(t, "outside", out, treetest.Snapshot(t, e.outside))
	treetest.Same(t, "project", in, treetest.Snapshot(t, e.root))
}
