package portowner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// ErrRefused is matched (errors.Is) by every connection a Dialer refused
// to hand back: it was closed before a byte was written on it, so the
// credential meant for it was not sent. See *RefusedError.
var ErrRefused = errors.New("the connection was refused before a byte was sent")

// RefusedError is a Dialer's refusal of a connection it dialled: another
// user holds the far end (Err nil, Owner set), or who holds it could not
// be verified (Err says why).
type RefusedError struct {
	// Addr is the address dialled, "127.0.0.1:8686".
	Addr string
	// Source names what named the address (Dialer.Source), "" if nothing
	// did.
	Source string
	// Owner holds the far end, resolved (see Resolve); set when Err is
	// nil.
	Owner Owner
	// Err is why the owner is not known; nil when it is another user.
	Err error
}

func (e *RefusedError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("cannot verify that %s is held by you (%v); the credential was not sent", e.Addr, e.Err)
	}
	why := "what ran there is gone and another user took the port"
	if e.Source != "" {
		why = e.Source + " is stale or another user took the port"
	}
	return fmt.Sprintf("%s is held by %s, not by you: %s; the credential was not sent", e.Addr, e.Owner, why)
}

// Foreign reports whether the far end is known to be another user's.
func (e *RefusedError) Foreign() bool { return e.Err == nil }

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Unwrap is the reason the owner is unknown (nil for another user's).
func (e *RefusedError) Unwrap() error { return e.Err }

// DefaultDialTimeout bounds a Dialer's connect when it has no net.Dialer
// of its own.
const DefaultDialTimeout = 10 * time.Second

// Dialer dials the loopback TCP connections of a client that sends a
// credential (a key read from a private file, a token) to a port a file or
// a flag named, and hands a connection back only once the server side of
// it is a socket of this process's user (Peer): another local user may
// hold that port, after our server died and left its file behind, or by
// winning the race for it, and must not receive the credential. The check
// runs after connecting and before any byte is written, on the very
// connection, so no other process can slip in between check and write.
//
// A refused connection is closed and *RefusedError returned (ErrRefused):
// for another user's socket it names the owner; where the socket table
// can be read but does not show the owner (not found, a connection not
// accepted yet whose listener is gone or could be either of two users',
// an unreadable table) it says the owner could not be verified.
// Where this system has no socket table to read at all (ErrUnknown: the BSDs
// for now) the connection is handed back
// unchecked, unless Strict: refusing there would break every keyed client
// on those systems, which is worse than the gap it closes; a client whose
// credential must never go unchecked (OpenCode's) sets Strict.
//
// DialContext fits http.Transport.DialContext; Dial fits gws.Dialer. The
// check is per new connection: a transport's pooled keep-alive
// connections were checked when dialled and stay with that socket. A
// transport using a Dialer must have no Proxy (see Transport), or the
// check would vet the proxy instead.
type Dialer struct {
	// Net dials; nil is a net.Dialer with DefaultDialTimeout.
	Net *net.Dialer
	// Source names what named the address, for the refusal's message:
	// "the file /home/u/.local/state/hub/hub.json". "" when nothing did.
	Source string
	// Strict refuses where the owner cannot be known on this system
	// (ErrUnknown) too.
	Strict bool

	// peer is Peer; tests replace it.
	peer func(context.Context, net.Conn) (Owner, error)
}

// DialContext dials addr and returns the connection once its far end is
// verified to be this user's (see Dialer).
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	nd := d.Net
	if nd == nil {
		nd = &net.Dialer{Timeout: DefaultDialTimeout}
	}
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if err := d.check(ctx, c, addr); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Dial is DialContext without a context (gws.Dialer).
func (d *Dialer) Dial(network, addr string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, addr)
}

func (d *Dialer) check(ctx context.Context, c net.Conn, addr string) error {
	peer := d.peer
	if peer == nil {
		peer = Peer
	}
	o, err := peer(ctx, c)
	switch {
	case err == nil && o.Mine():
		return nil
	case err == nil:
		return &RefusedError{Addr: addr, Source: d.Source, Owner: Resolve(o)}
	case errors.Is(err, ErrUnknown) && !d.Strict:
		return nil // see Dialer: nothing to check with here
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return &RefusedError{Addr: addr, Source: d.Source, Err: err}
}

// Transport is an HTTP/1.1 transport whose every new connection is dialled
// and checked by d: no proxy (a proxy's connection would be the one
// checked), at most 16 idle keep-alive connections, dropped after 90 s.
// Its caller owns it: CloseIdleConnections when done.
func (d *Dialer) Transport() *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         d.DialContext,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   false,
	}
}
