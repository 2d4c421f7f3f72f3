package portowner

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hubdev/hub/hub/portowner/portownertest"
)

// TestDialerRefusesAnotherUser: a port the user nobody holds, named by a
// leftover file of ours, gets no connection from a Dialer, so no byte of
// the request that carries the credential: the refusal names the holder,
// the file and what was not sent. With TCP_DEFER_ACCEPT, or from a
// squatter that never accepts, the far end is still unaccepted when it is
// checked, and refused as well: its listener is nobody's.
func TestDialerRefusesAnotherUser(t *testing.T) {
	needTable(t)
	for _, tc := range []struct {
		name string
		o    portownertest.Options
	}{
		{"plain", portownertest.Options{}},
		{"defer-accept", portownertest.Options{DeferAccept: true}},
		{"never-accepts", portownertest.Options{NoAccept: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sq := portownertest.StartWith(t, "127.0.0.1:0", tc.o)
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sq.Port))
			d := &Dialer{Source: "the file /tmp/x/session.json"}

			_, err := d.DialContext(context.Background(), "tcp", addr)
			var re *RefusedError
			if !errors.As(err, &re) || !errors.Is(err, ErrRefused) || !re.Foreign() || re.Owner.UID != sq.UID {
				t.Fatalf("dial: %v, want a refusal naming uid %d", err, sq.UID)
			}
			sq.Refused(t, err, "the file /tmp/x/session.json")

			hc := &http.Client{Transport: d.Transport()}
			defer hc.CloseIdleConnections()
			req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/control/info", nil)
			req.Header.Set("Authorization", "Bearer secret-key")
			if resp, err := hc.Do(req); err == nil || !errors.Is(err, ErrRefused) {
				if resp != nil {
					resp.Body.Close()
				}
				t.Fatalf("request through the transport: %v, want the refusal", err)
			}
			if (&Dialer{Source: "x", Strict: true}).Transport().Proxy != nil {
				t.Error("the transport has a proxy")
			}
			sq.Untouched(t)
		})
	}
}

// TestRefusedErrorText: without a source the message still says why.
func TestRefusedErrorText(t *testing.T) {
	e := &RefusedError{Addr: "127.0.0.1:8686", Owner: Owner{UID: 65534, User: "nobody"}}
	if e.Owner.Mine() {
		t.Skip("running as uid 65534")
	}
	want := "127.0.0.1:8686 is held by uid 65534 (nobody), not by you: what ran there is gone and another user took the port; the credential was not sent"
	if e.Error() != want {
		t.Errorf("%q\nwant %q", e.Error(), want)
	}
	u := &RefusedError{Addr: "127.0.0.1:1", Err: ErrNotAccepted}
	if !errors.Is(u, ErrNotAccepted) || !errors.Is(u, ErrRefused) || u.Foreign() ||
		!strings.Contains(u.Error(), "cannot verify that 127.0.0.1:1 is held by you") {
		t.Errorf("unverified: %v", u)
	}
}

// server is an HTTP server of ours counting the connections it saw.
func server(t testing.TB) (*httptest.Server, *atomic.Int64) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// TestDialerOwn: our own server is dialled, and a transport checks each
// new connection once: keep-alive requests reuse it unchecked.
func TestDialerOwn(t *testing.T) {
	needTable(t)
	srv, conns := server(t)
	var checks atomic.Int64
	d := &Dialer{peer: func(ctx context.Context, c net.Conn) (Owner, error) {
		checks.Add(1)
		return Peer(ctx, c)
	}}
	hc := &http.Client{Transport: d.Transport()}
	defer hc.CloseIdleConnections()
	for i := range 10 {
		resp, err := hc.Get(srv.URL)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "ok" {
			t.Fatalf("request %d: %q", i, b)
		}
	}
	if checks.Load() != 1 || conns.Load() != 1 {
		t.Errorf("%d checks, %d connections for 10 keep-alive requests, want 1 and 1", checks.Load(), conns.Load())
	}
	c, err := d.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	c.Close()
}

// gatedListener is a server's listener that accepts nothing until open
// is closed (or it is): a server too busy to accept, for as long as a
// test needs.
type gatedListener struct {
	net.Listener
	open   <-chan struct{}
	closed chan struct{}
	once   *sync.Once
}

func (l gatedListener) Accept() (net.Conn, error) {
	select {
	case <-l.open:
	case <-l.closed:
	}
	return l.Listener.Accept()
}

func (l gatedListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// TestDialerSlowServer: our own server, which accepts the connection only
// once the Dialer's check has answered (a busy server on a loaded
// machine), gets the request: the check answers while the connection
// waits in our listener's queue, without waiting for an accept. As root
// it was refused ("not accepted in time", after a quarter second): a
// keyed client's call failing under load.
func TestDialerSlowServer(t *testing.T) {
	needTable(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	checked := make(chan struct{})
	var checkedOnce sync.Once
	srv.Listener = gatedListener{Listener: srv.Listener, open: checked, closed: make(chan struct{}), once: new(sync.Once)}
	srv.Start()
	defer srv.Close()
	d := &Dialer{Source: "the file f", peer: func(ctx context.Context, c net.Conn) (Owner, error) {
		defer checkedOnce.Do(func() { close(checked) })
		return Peer(ctx, c)
	}}
	hc := &http.Client{Transport: d.Transport()}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get(srv.URL)
	if err != nil {
		t.Fatalf("%v, want our server's answer", err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); string(b) != "ok" {
		t.Fatalf("%q", b)
	}
}

// TestDialerUnknownOwner: what the check does with each answer it can
// get, the connection closed whenever it is refused.
func TestDialerUnknownOwner(t *testing.T) {
	srv, _ := server(t)
	addr := srv.Listener.Addr().String()
	for _, tc := range []struct {
		name   string
		strict bool
		owner  Owner
		err    error // context.Canceled: the dial's context ends during the check
		want   error // nil: the connection is handed back
	}{
		{"no table", false, Owner{}, ErrUnknown, nil},
		{"no table, strict", true, Owner{}, ErrUnknown, ErrRefused},
		{"not found", false, Owner{}, ErrNotFound, ErrRefused},
		{"not accepted, no listener", false, Owner{}, ErrNotAccepted, ErrRefused},
		{"not accepted, listeners of two users", false, Owner{}, ErrAmbiguous, ErrRefused},
		{"table error", false, Owner{}, errors.New("socket table row 3: bad uid"), ErrRefused},
		{"canceled", false, Owner{}, context.Canceled, context.Canceled},
		{"another user", false, Owner{UID: otherUID()}, nil, ErrRefused},
		{"ours", false, Owner{UID: os.Getuid()}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var checked net.Conn
			d := &Dialer{Strict: tc.strict, Source: "the file f", peer: func(context.Context, net.Conn) (Owner, error) {
				return tc.owner, tc.err
			}}
			peer := d.peer
			d.peer = func(pctx context.Context, c net.Conn) (Owner, error) {
				checked = c
				if errors.Is(tc.err, context.Canceled) {
					cancel()
				}
				return peer(pctx, c)
			}
			c, err := d.DialContext(ctx, "tcp", addr)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("%v, want the connection", err)
				}
				c.Close()
				return
			}
			if !errors.Is(err, tc.want) || c != nil {
				t.Fatalf("%v, %v; want %v", c, err, tc.want)
			}
			if _, werr := checked.Write([]byte("x")); !errors.Is(werr, net.ErrClosed) {
				t.Errorf("the refused connection was left open (write: %v)", werr)
			}
		})
	}
}

// otherUID is a uid that is not ours.
func otherUID() int {
	if (Owner{UID: 65534}).Mine() {
		return 65533
	}
	return 65534
}

// BenchmarkDialer is the cost of the check per new connection: a loopback
// connect and close with net.Dialer alone, then with a Dialer (connect,
// the kernel's answer through sock_diag, close), then per request over a
// kept-alive connection, where nothing is checked again.
func BenchmarkDialer(b *testing.B) {
	if _, err := Listener(netip.Addr{}, 1); errors.Is(err, ErrUnknown) {
		b.Skip("no socket table here")
	}
	srv, _ := server(b)
	addr := srv.Listener.Addr().String()
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		dial func(context.Context, string, string) (net.Conn, error)
	}{
		{"net.Dialer", (&net.Dialer{}).DialContext},
		{"Dialer", (&Dialer{Net: &net.Dialer{}}).DialContext},
	} {
		b.Run("connect/"+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c, err := bc.dial(ctx, "tcp", addr)
				if err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
		b.Run("keepalive-request/"+bc.name, func(b *testing.B) {
			tr := &http.Transport{DialContext: bc.dial, MaxIdleConnsPerHost: 16}
			defer tr.CloseIdleConnections()
			hc := &http.Client{Transport: tr}
			b.ReportAllocs()
			for b.Loop() {
				resp, err := hc.Get(srv.URL)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
