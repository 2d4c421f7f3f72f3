package mutation_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/engine/staging"
	"github.com/hubdev/hub/geturl/transport"
)

// Staging through real URLs: acknowledgements name the index and carry
// the exact status URL, replays are duplicates, conflicts and count
// changes fail at once, and a patch staged in three chunks applies.
func TestStagingRoutes(t *testing.T) {
	e := newEnv(t, rw, map[string]string{"app.txt": "one\ntwo\n"})
	patch := "*** Begin Patch\n*** Update File: app.txt\n@@\n-two\n+TWO\n*** Add File: added.txt\n+added\n*** End Patch\n"
	chunks := []string{patch[:20], patch[20:50], patch[50:]}
	status := e.m + "/b?blob=feature"
	a := e.ok(e.m + "/s?blob=feature&i=2&count=3&raw=" + transport.Encode(chunks[2]))
	if a.StatusURL != status || !a.Snapshot || a.Complete || fmt.Sprint(a.Missing) != "[0 1]" || !strings.Contains(a.raw, `"index":2`) {
		t.Fatalf("%s", a.raw)
	}
	e.fail(e.m+"/a?blob=feature&count=3&wait=1500", staging.CodeBlobIncomplete)
	e.ok(e.m + "/s?blob=feature&i=0&count=3&raw=" + transport.Encode(chunks[0]))
	if d := e.ok(e.m + "/s?blob=feature&i=0&count=3&raw=" + transport.Encode(chunks[0])); !d.Duplicate {
		t.Fatalf("%s", d.raw)
	}
	e.fail(e.m+"/s?blob=feature&i=0&count=3&raw=other", staging.CodeChunkConflict)
	e.fail(e.m+"/s?blob=feature&i=1&count=4&raw=x", staging.CodeCountMismatch)
	e.fail(e.m+"/s?blob=feature&i=3&count=3&raw=x", staging.CodeIndexOutOfRange)
	st := e.ok(status)
	if fmt.Sprint(st.Received, st.Missing) != "[0 2] [1]" || st.Preview != chunks[0] {
		t.Fatalf("%s", st.raw)
	}
	if c := e.ok(e.m + "/s?blob=feature&i=1&count=3&raw=" + transport.Encode(chunks[1])); !c.Complete || c.Snapshot {
		t.Fatalf("%s", c.raw)
	}
	e.fail(e.m+"/a?blob=feature&count=2&wait=1500", staging.CodeCountMismatch)
	e.fail(e.m+"/a?blob=feature&count=4&wait=1500", staging.CodeCountMismatch)
	e.fail(e.m+"/a?blob=nope&wait=1500", staging.CodeBlobNotFound)
	e.done(e.m + "/a?blob=feature&count=3&wait=1500")
	if e.file("app.txt") != "one\nTWO\n" || e.file("added.txt") != "added\n" {
		t.Fatal("the staged patch did not apply")
	}
	// The same patch by raw= is the same intent: already applied.
	if r := e.done(e.m + "/a?wait=1500&raw=" + transport.Encode(patch)); !r.Replayed {
		t.Fatalf("%s", r.raw)
	}

	// Strict transports: one content source, count only with blob.
	e.fail(e.m+"/w?path=x&blob=feature&raw=x", transport.CodeConflictingContent)
	e.fail(e.m+"/w?path=x&content=a&raw=x", transport.CodeConflictingContent)
	e.fail(e.m+"/w?path=x&count=3&raw=x", transport.CodeMissingParameter)
	e.fail(e.m+"/e?path=app.txt&old=one&oldBlob=feature&new=x", transport.CodeConflictingContent)
	e.fail(e.m+"/e?path=app.txt&old=one&new=x&raw=y", transport.CodeConflictingContent)
	e.fail(e.m+"/s?blob=b&i=0&raw=x", transport.CodeMissingParameter)
	e.fail(e.m+"/s?blob=../b&i=0&count=1&raw=x", transport.CodeInvalidParameter)
	if e.sess.state.Journal.Len() != 1 {
		t.Fatalf("%d intents", e.sess.state.Journal.Len())
	}
}

// /e takes old and new from separate blobs, or new by raw= with old
// staged.
func TestEditFromBlobs(t *testing.T) {
	e := newEnv(t, rw, map[string]string{"e.txt": "alpha\nbeta\ngamma\n"})
	e.ok(e.m + "/s?blob=old1&i=0&count=1&raw=beta~n")
	e.ok(e.m + "/s?blob=new1&i=0&count=2&raw=BE")
	e.ok(e.m + "/s?blob=new1&i=1&count=2&raw=TA~n")
	e.done(e.m + "/e?path=e.txt&oldBlob=old1&oldCount=1&newBlob=new1&newCount=2&wait=1500")
	if e.file("e.txt") != "alpha\nBETA\ngamma\n" {
		t.Fatal(e.file("e.txt"))
	}
	e.ok(e.m + "/s?blob=old2&i=0&count=1&raw=gamma")
	e.done(e.m + "/e?path=e.txt&oldBlob=old2&wait=1500&raw=GAMMA")
	if e.file("e.txt") != "alpha\nBETA\nGAMMA\n" {
		t.Fatal(e.file("e.txt"))
	}
	e.fail(e.m+"/e?path=e.txt&oldBlob=old1&newBlob=new1&newCount=1", staging.CodeCountMismatch)
}
