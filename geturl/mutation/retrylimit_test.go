package mutation_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/transport"
)

// A retry URL is the request again with run= added: for a request near
// the target limit that may not fit, and a URL the transport itself
// refuses must not be offered as the way on.
func TestRetryURLFitsTheTargetLimit(t *testing.T) {
	e := newEnv(t, rw, map[string]string{"f.txt": "old\n"})
	mu, _ := url.Parse(e.m)
	head := "/w?path=f.txt&wait=1500&content="
	u := e.m + head + strings.Repeat("x", transport.MaxTarget-len(mu.Path)-len(head))
	a := e.fail(u, "read_required")
	if a.Retry == "" {
		return
	}
	if r, _ := url.Parse(a.Retry); len(r.RequestURI()) > transport.MaxTarget {
		t.Fatalf("the retry URL of a %d-byte request is %d bytes: over the limit", transport.MaxTarget, len(r.RequestURI()))
	}
}
