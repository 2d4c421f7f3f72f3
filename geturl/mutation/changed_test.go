package mutation_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hubdev/hub/geturl/engine/terminal"
	"github.com/hubdev/hub/geturl/mutation"
	"github.com/hubdev/hub/geturl/transport"
)

// Options.Changed hears of every successful file mutation once, with the
// project-relative paths it changed (a move as its source and
// destination), and of nothing else: not a refusal, not a failure, not a
// replay, not a terminal command.
func TestChangedReportsTheFilesAMutationChanged(t *testing.T) {
	var mu sync.Mutex
	var got []string
	o := mutation.Options{Terminal: &terminal.Config{}, Changed: func(c mutation.Change) {
		mu.Lock()
		defer mu.Unlock()
		if c.Session == nil || c.Call == "" {
			t.Errorf("change without session or call: %+v", c)
		}
		got = append(got, c.Tool+" "+strings.Join(c.Paths, ","))
	}}
	e := newEnvWith(t, rw, o, map[string]string{"a.txt": "a\n", "src/b.go": "b\n", "old.txt": "o\n", "gone.txt": "g\n"})
	enc := transport.Encode
	w := e.done(e.m + "/w?path=/project/new/n.txt&wait=1500&raw=n")
	e.done(e.m + "/e?path=a.txt&old=a&new=A&wait=1500")
	e.done(e.m + "/a?wait=1500&raw=" + enc("*** Begin Patch\n*** Update File: src/b.go\n@@\n-b\n+B\n"+
		"*** Update File: old.txt\n*** Move to: moved/new.txt\n@@\n-o\n+O\n*** Delete File: gone.txt\n"+
		"*** Update File: a.txt\n@@\n-A\n+A\n*** End Patch\n")) // the last section changes nothing
	e.done(e.m + "/x?wait=1500&raw=true")
	e.fail(e.m+"/e?path=a.txt&old=zzz&new=y&wait=1500", "edit_old_not_found")
	e.fail(e.m+"/w?path=.git/config&wait=1500&raw=x", "vcs_metadata")
	if r := e.done(e.m + "/w?path=/project/new/n.txt&wait=1500&raw=n"); !r.Replayed || r.Call != w.Call {
		t.Fatalf("%s", r.raw)
	}
	if err := e.host.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"write new/n.txt", "edit a.txt", "apply_patch src/b.go,old.txt,moved/new.txt,gone.txt"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("changes %q, want %q", got, want)
	}
}
