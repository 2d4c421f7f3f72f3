package bench

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Load is one path a user runs, as a harness drives it.
type Load struct {
	// Name is the table row's name.
	Name string
	// Adapter is the hub adapter it needs, and Section that adapter's
	// hub.yaml section.
	Adapter, Section string
	// Node is the bench/node script of the Node reference ("" when none);
	// Bare says the bare Go relay serves it too.
	Node string
	Bare bool
	// Unit is what an op counts: "op" (one round trip) or "MiB".
	Unit string
	// Connect readies callers independent clients against srv, one op
	// function per caller; an op returns how many units it did.
	Connect func(ctx context.Context, srv *Server, callers int) (*Clients, error)
}

// Clients is a load's connected callers.
type Clients struct {
	Ops []func() (int64, error)
	// Face is a process besides the server that the user's path runs
	// through (`hub mcp`), measured apart; nil when none.
	Face interface{ Usage() (Usage, error) }
	// Close releases them.
	Close func()
}

// Secrets a reference server takes in its environment, so the harness
// reaches it as it reaches the hub (which mints its own).
type Secrets struct{ Key, Token string }

// Env is the reference servers' environment for s.
func (s Secrets) Env() []string {
	return []string{"BENCH_KEY=" + s.Key, "BENCH_TOKEN=" + s.Token, "BENCH_ORIGIN=" + benchOrigin}
}

// NewSecrets mints fresh ones.
func NewSecrets() Secrets { return Secrets{Key: randomToken(), Token: randomToken()} }

// benchOrigin is the site every bridge is configured to trust.
const benchOrigin = "https://bench.example"

func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// port is where the load's bridge listens on srv.
func (l *Load) port(srv *Server) int {
	if srv.Kind == "hub" {
		return srv.Port(l.Adapter)
	}
	return srv.Port("")
}

func (l *Load) base(srv *Server) string { return "http://127.0.0.1:" + strconv.Itoa(l.port(srv)) }

// newHTTPClient keeps conns connections alive to one loopback server.
func newHTTPClient(conns int) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConnsPerHost: conns, DisableCompression: true,
		DialContext: (&net.Dialer{}).DialContext,
	}}
}

// fetch does req and returns the body of a 2xx answer.
func fetch(c *http.Client, req *http.Request) ([]byte, error) {
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return body, fmt.Errorf("%s %s: HTTP %d: %.200s", req.Method, req.URL.Path, resp.StatusCode, body)
	}
	return body, nil
}

// Loads is every row of the matrix, in table order.
func Loads(s Secrets) []*Load {
	return []*Load{
		stitchslopCall(s),
		hubMCPCall(s),
		pixelleCommand(),
		aiuiIngest(),
		geturlInit(s),
		geturlRead(s),
		geturlGrep(s),
		geturlEdit(s),
	}
}
