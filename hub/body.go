package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// BodyPace bounds how long a request body may take to arrive: Base, plus
// one second for every MinRate bytes the route accepts. Without it a
// client that trickles a body one byte a second holds a connection, a
// goroutine and a buffer for as long as it likes (ReadHeaderTimeout covers
// only the headers).
type BodyPace struct {
	Base    time.Duration
	MinRate int64 // bytes per second
}

// DefaultBodyPace is generous for loopback clients, which send a whole
// body at memory speed: a 4 MiB body gets 18 s.
var DefaultBodyPace = BodyPace{Base: 10 * time.Second, MinRate: 512 << 10}

// DefaultBodyLimit sizes the deadline of a body no route has bounded
// (ReadJSONBody re-arms it with the route's own limit).
const DefaultBodyLimit = 1 << 20

// Timeout is the time a body of up to limit bytes may take.
func (p BodyPace) Timeout(limit int64) time.Duration {
	rate := max(p.MinRate, 1)
	return p.Base + time.Duration(max(limit, 0))*time.Second/time.Duration(rate)
}

type bodyPaceKey struct{}

// WithBodyPace makes ServeHTTP servers started with ctx use p instead of
// DefaultBodyPace (tests use a short one).
func WithBodyPace(ctx context.Context, p BodyPace) context.Context {
	return context.WithValue(ctx, bodyPaceKey{}, p)
}

func bodyPaceFrom(ctx context.Context) BodyPace {
	if p, ok := ctx.Value(bodyPaceKey{}).(BodyPace); ok {
		return p
	}
	return DefaultBodyPace
}

// ErrBodyTooSlow marks a request body that did not arrive within its
// deadline.
var ErrBodyTooSlow = errors.New("body too slow")

// paceBodies gives every request that has a body a read deadline sized by
// pace (for DefaultBodyLimit until a route says otherwise), which ends
// when the body has been read to its end. The deadline is on the
// connection, so it also bounds what the server reads of a body the
// handler left unread. After the body, the server keeps a background read
// on the connection to notice a client going away; a deadline firing
// there would cancel a long poll or a stream, so a finished body is never
// armed again. Requests without a body (GET streams, WebSocket upgrades)
// are left alone.
func paceBodies(next http.Handler, pace BodyPace) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			b := &pacedBody{ReadCloser: r.Body, rc: http.NewResponseController(w), pace: pace}
			b.arm(DefaultBodyLimit)
			r.Body = b
		}
		next.ServeHTTP(w, r)
	})
}

// pacedBody is a request body under a read deadline.
type pacedBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	pace BodyPace

	mu   sync.Mutex
	done bool // read to EOF: the deadline is cleared for good
}

// arm (re)starts the deadline for a body of up to limit bytes, counted
// from now.
func (b *pacedBody) arm(limit int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done {
		b.rc.SetReadDeadline(time.Now().Add(b.pace.Timeout(limit)))
	}
}

func (b *pacedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.mu.Lock()
		if !b.done {
			// net/http clears the deadline too as it starts its
			// background read; clearing it here does not depend on that.
			b.done = true
			b.rc.SetReadDeadline(time.Time{})
		}
		b.mu.Unlock()
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("%w: %w", ErrBodyTooSlow, err)
	}
	return n, err
}
