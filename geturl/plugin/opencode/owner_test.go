package opencode

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/plugin"
	"github.com/hubdev/hub/hub/portowner"
	"github.com/hubdev/hub/hub/portowner/portownertest"
)

// The /k plugin listing is open to every session, read-only ones too: it
// shows the connection state without ever sending the credential, even to
// our own server that asks for one.
func TestListingSendsNoCredential(t *testing.T) {
	for _, tc := range []struct {
		name, password string
		mod            func(*Config)
		want           string
	}{
		{"credential configured, untried", "pw", func(c *Config) { c.DeviceToken = "pw" }, StateNotVerified},
		{"bootstrap configured, untried", "pw", func(c *Config) { c.BootstrapPassword = "pw" }, StateNotVerified},
		{"none configured", "pw", nil, StateNeedAuth},
		{"none needed", "", func(c *Config) { c.DeviceToken = "pw" }, StateReady},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeOC(t, tc.password, "")
			p := fakePlugin(t, f.URL, nil, tc.mod)
			if st := p.Status(context.Background()); st != tc.want {
				t.Fatalf("Status = %q, want %q", st, tc.want)
			}
			for _, r := range f.requests() {
				if r.auth != "" {
					t.Fatalf("the listing sent %s a credential", r.path)
				}
			}
			if p.cfg.BootstrapPassword != "" && p.client.bootstrap == "" {
				t.Fatal("the listing spent the bootstrap password")
			}
		})
	}
	// After a call connected, the listing shows that call's state and
	// asks the server nothing.
	f := newFakeOC(t, "pw", "")
	p := fakePlugin(t, f.URL, nil, func(c *Config) { c.DeviceToken = "pw" })
	callOK(t, p, plugin.Authority{Root: t.TempDir()}, ToolInfo, `{"action":"agents"}`)
	n := len(f.requests())
	if st := p.Status(context.Background()); st != StateReady || len(f.requests()) != n {
		t.Fatalf("Status after a call = %q, %d new requests", st, len(f.requests())-n)
	}
}

// A listener of another user (stubbed: the socket table is read in
// TestCredentialNeverReachesAnotherUser) gets nothing at all: not the
// credential, not even the credential-free probe, from a listing or a call.
func TestForeignListenerGetsNothing(t *testing.T) {
	f := newFakeOC(t, "pw", "")
	other := func(context.Context, net.Conn) (portowner.Owner, error) {
		return portowner.Owner{UID: os.Getuid() + 1}, nil
	}
	cfg := NewConfig()
	cfg.URL, cfg.DeviceToken = f.URL, "pw"
	p := New(cfg, Options{Owner: (&owner{err: errNoOwner}).get, Peer: other})
	if st := p.Status(context.Background()); st != StateForeign {
		t.Fatalf("Status = %q, want %q", st, StateForeign)
	}
	auth := plugin.Authority{Root: t.TempDir()}
	e := callErr(t, p, auth, ToolInfo, `{"action":"agents"}`)
	if e.Code != CodeForeignListener || !strings.Contains(e.Detail, fmt.Sprintf("held by uid %d", os.Getuid()+1)) {
		t.Fatalf("agents = %+v", e)
	}
	if out := callOK(t, p, auth, ToolInfo, `{"action":"status"}`); str(out, "state") != StateForeign {
		t.Fatalf("status = %v", out)
	}
	if n := len(f.requests()); n != 0 {
		t.Fatalf("%d requests reached another user's listener", n)
	}
}

// Where the owner cannot be known (a system without a socket table
// reader), credential-free requests go on as before, but the credential is
// never sent: the call fails closed, saying why and what still works.
func TestUnknownOwnerGetsNoCredential(t *testing.T) {
	unknown := func(context.Context, net.Conn) (portowner.Owner, error) {
		return portowner.Owner{}, portowner.ErrUnknown
	}
	auth := plugin.Authority{Root: t.TempDir()}

	open := newFakeOC(t, "", "")
	cfg := NewConfig()
	cfg.URL = open.URL
	p := New(cfg, Options{Owner: (&owner{err: errNoOwner}).get, Peer: unknown})
	callOK(t, p, auth, ToolInfo, `{"action":"agents"}`) // no credential needed: works

	locked := newFakeOC(t, "pw", "")
	cfg = NewConfig()
	cfg.URL, cfg.DeviceToken = locked.URL, "pw"
	p = New(cfg, Options{Owner: (&owner{err: errNoOwner}).get, Peer: unknown})
	if st := p.Status(context.Background()); st != StateNotVerified {
		t.Fatalf("Status = %q", st)
	}
	e := callErr(t, p, auth, ToolInfo, `{"action":"agents"}`)
	if e.Code != CodeOwnerUnknown || e.Retryable || !strings.Contains(e.Hint, "cannot check") {
		t.Fatalf("agents = %+v", e)
	}
	if out := callOK(t, p, auth, ToolInfo, `{"action":"status"}`); str(out, "state") != StateOwnerUnknown {
		t.Fatalf("status = %v", out)
	}
	for _, r := range locked.requests() {
		if r.auth != "" {
			t.Fatalf("the credential reached %s though its owner is unknown", r.path)
		}
	}
}

// TestCredentialNeverReachesAnotherUser: with the user nobody holding the
// configured OpenCode port (a server that asks every request for Basic
// auth and records what it got), neither the /k listing nor any call sends
// it the device token; it is named as the holder.
func TestCredentialNeverReachesAnotherUser(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("owners are read from the Linux socket table")
	}
	sq := portownertest.Start(t, "127.0.0.1:0")
	cfg := NewConfig()
	cfg.URL = fmt.Sprintf("http://127.0.0.1:%d", sq.Port)
	cfg.DeviceToken = "device-token-secret"
	p := New(cfg, Options{})
	listing := p.Status(context.Background())
	auth := plugin.Authority{Root: t.TempDir()} // read-only
	status := callOK(t, p, auth, ToolInfo, `{"action":"status"}`)
	_, errAgents := callTool(p, auth, ToolInfo, `{"action":"agents"}`)

	for _, r := range sq.Stop() {
		if r.Authorization != "" {
			t.Fatalf("nobody's listener received %s %s with Authorization %q", r.Method, r.Path, r.Authorization)
		}
	}
	if listing != StateForeign || str(status, "state") != StateForeign {
		t.Fatalf("listing %q, status %v; want %q", listing, status, StateForeign)
	}
	want := fmt.Sprintf("is held by uid %d (nobody)", sq.UID)
	if !strings.Contains(str(status, "detail"), want) || errAgents == nil || !strings.Contains(errAgents.Error(), want) {
		t.Fatalf("status detail %q, call %v; want them to say %q", str(status, "detail"), errAgents, want)
	}
}
