package mutation_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/internal/treetest"
	"github.com/hubdev/hub/geturl/mutation"
	"github.com/hubdev/hub/geturl/route"
)

// A read-only session has no mutation base: every mutation route, on the
// only base it has, is refused with no effect, and no URL it is offered
// performs the mutation either.
func TestReadOnlySessionRefusesEveryMutation(t *testing.T) {
	e := newEnv(t, route.Permissions{}, map[string]string{"f.txt": "keep\n"})
	var init struct {
		Bases map[string]string
	}
	if err := json.Unmarshal([]byte(e.get(strings.TrimSuffix(e.r, "ARead001")+"init/AInit001")), &init); err != nil {
		t.Fatal(err)
	}
	if init.Bases["r"] == "" || init.Bases["m"] != "" || e.m != "" {
		t.Fatalf("read-only bases %v", init.Bases)
	}
	before := treetest.Snapshot(t, e.root)
	for _, q := range []string{
		"/w?path=new.txt&wait=1500&raw=x",
		"/w?path=f.txt&wait=1500&raw=x",
		"/e?path=f.txt&old=keep&new=lost&wait=1500",
		"/a?wait=1500&raw=***+Begin+Patch~n***+Delete+File:+f.txt~n***+End+Patch~n",
		"/x?wait=1500&raw=touch+pwned",
		"/s?blob=b&i=0&count=1&raw=x",
		"/b?blob=b",
		"/j?call=auto:write:0123456789abcdef",
	} {
		a := e.do(e.r + q)
		if a.OK || a.ErrorCode != route.CodeMutationsDisabled {
			t.Errorf("%s: %s", q, a.raw)
		}
		if a.Repair != "" || a.Retry != "" || a.Repeat != "" || a.Poll != "" {
			t.Errorf("%s offers a URL: %s", q, a.raw)
		}
	}
	// The one repair a read-only session gets for /s is stat, a read.
	a := e.do(e.r + "/s?path=f.txt")
	if !strings.HasPrefix(a.Repair, e.r+"/t?path=f.txt") {
		t.Fatalf("%s", a.raw)
	}
	e.ok(a.Repair)
	treetest.Same(t, "read-only project", before, treetest.Snapshot(t, e.root))
}

// Per-route permission: file tools need write, /x needs terminal; staging
// and results serve either. Refusals come before any intent.
func TestPerRoutePermissions(t *testing.T) {
	term := newEnv(t, route.Permissions{Terminal: true}, map[string]string{"f.txt": "keep\n"})
	for _, q := range []string{"/w?path=n.txt&raw=x", "/e?path=f.txt&old=keep&new=x", "/a?raw=***+Begin+Patch~n***+Delete+File:+f.txt~n***+End+Patch~n"} {
		a := term.fail(term.m+q, mutation.CodeToolNotPermitted)
		if a.Repair != "" || a.Retry != "" {
			t.Fatal(a.raw)
		}
	}
	term.ok(term.m + "/s?blob=b&i=0&count=1&raw=x")
	term.ok(term.m + "/b?blob=b")
	if term.sess.state.Journal.Len() != 0 || !term.missing("n.txt") || term.file("f.txt") != "keep\n" {
		t.Fatal("a refused mutation left a trace")
	}
	write := newEnv(t, route.Permissions{Write: true}, nil)
	write.fail(write.m+"/x?raw=touch+x", mutation.CodeToolNotPermitted)
	if !write.missing("x") {
		t.Fatal("ran")
	}
}
