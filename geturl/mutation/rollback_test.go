package mutation_test

import (
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/engine/filechange"
	"github.com/hubdev/hub/geturl/internal/treetest"
	"github.com/hubdev/hub/geturl/transport"
)

// A patch whose second hunk does not apply changes nothing: every hunk is
// preflighted before the first write. The failure is the intent's record.
func TestPatchFailingSecondHunkChangesNothing(t *testing.T) {
	e := newEnv(t, rw, map[string]string{"a.txt": "a1\na2\n", "b.txt": "b1\nb2\n"})
	before := treetest.Snapshot(t, e.root)
	p := "*** Begin Patch\n*** Update File: a.txt\n@@\n-a1\n+A1\n*** Update File: b.txt\n@@\n b1\n-not there\n+B\n*** Add File: c.txt\n+c\n*** End Patch\n"
	a := e.fail(e.m+"/a?wait=1500&raw="+transport.Encode(p), filechange.CodePatchHunkNotFound)
	if a.Call == "" || !strings.Contains(a.raw, "b.txt") {
		t.Fatalf("%s", a.raw)
	}
	treetest.Same(t, "after a refused patch", before, treetest.Snapshot(t, e.root))
}
