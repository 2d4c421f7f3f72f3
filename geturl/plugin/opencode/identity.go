package opencode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/hubdev/hub/hub/portowner"
)

// The instance pinning headers of the spec. A server that knows them
// answers with its instance id and refuses a request whose expectation
// does not match; OpenCode 1.18 ignores them (see procIdentity).
const (
	HeaderInstance       = "X-Opencode-Instance"
	HeaderExpectInstance = "X-Opencode-Expect-Instance"
)

// Identity is what the plugin pins: who answered the first probe.
type Identity struct {
	// Kind says where the identity came from: "server" (the server's own
	// instance id), "process" (the pid and start time of the process that
	// owns the listening socket) or "none" (neither could be learnt).
	Kind string `json:"kind"`
	// Value is the pinned id; it identifies a process, it is no secret.
	Value string `json:"value,omitempty"`
}

// ErrInstanceChanged is the fail-closed refusal after the process behind
// the port changed.
var ErrInstanceChanged = errors.New("the OpenCode process behind the configured port changed since it was pinned")

// serverInstance reads a server-declared instance id from a probe answer:
// the response header first, then an "instance"/"instanceID" JSON field.
func serverInstance(h http.Header, body []byte) string {
	if v := strings.TrimSpace(h.Get(HeaderInstance)); v != "" {
		return v
	}
	var b struct {
		Instance   string `json:"instance"`
		InstanceID string `json:"instanceID"`
	}
	if json.Unmarshal(body, &b) == nil {
		if b.InstanceID != "" {
			return b.InstanceID
		}
		return b.Instance
	}
	return ""
}

// checkResponse enforces a "server" pin on one answer: a server that
// declared an instance id must keep declaring the same one.
func (id Identity) checkResponse(resp *http.Response) error {
	if id.Kind != "server" {
		return nil
	}
	got := strings.TrimSpace(resp.Header.Get(HeaderInstance))
	if got != id.Value || resp.StatusCode == http.StatusPreconditionFailed {
		return ErrInstanceChanged
	}
	return nil
}

// ProcessOwner finds the process that owns the TCP listener on a loopback
// port: its pid and a value that changes when that pid is reused (the
// process start time). Stubbed in tests.
type ProcessOwner func(host string, port int) (pid int, start string, err error)

// PeerOwner finds who holds the far end of a dialled connection
// (portowner.Peer by default; stubbed in tests).
type PeerOwner func(ctx context.Context, c net.Conn) (portowner.Owner, error)

func processValue(pid int, start string) string { return fmt.Sprintf("pid:%d start:%s", pid, start) }
