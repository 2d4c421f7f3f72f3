package hub

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/lxzan/gws"
)

// ConnSet tracks the WebSocket connections an adapter has hijacked, because
// http.Server.Shutdown does not know about them and would leave them open.
type ConnSet struct {
	mu     sync.Mutex
	conns  map[*gws.Conn]struct{}
	closed bool
}

// Add tracks c. Once the set is closed (the server is shutting down), it
// closes c with 1001 (going away) the way CloseAll would have, and returns
// false: a connection upgraded during shutdown still gets a proper close.
func (s *ConnSet) Add(c *gws.Conn) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		closeWith(c, 1001, "server shutting down")
		return false
	}
	if s.conns == nil {
		s.conns = map[*gws.Conn]struct{}{}
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	return true
}

// Remove forgets c.
func (s *ConnSet) Remove(c *gws.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// Len is the number of tracked connections.
func (s *ConnSet) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// CloseAll sends a close frame with code and reason to every connection,
// closes it, and refuses later Adds. It returns how many were closed.
func (s *ConnSet) CloseAll(code uint16, reason string) int {
	s.mu.Lock()
	s.closed = true
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for c := range conns {
		closeWith(c, code, reason)
	}
	return len(conns)
}

// closeWith sends a close frame (bounded by a short write deadline, so a
// stuck peer cannot hold shutdown) and closes the socket.
func closeWith(c *gws.Conn, code uint16, reason string) {
	c.SetWriteDeadline(time.Now().Add(time.Second))
	c.WriteClose(code, []byte(reason))
	c.NetConn().Close()
}

// ShutdownGrace is how long in-flight HTTP requests get after cancellation.
const ShutdownGrace = 5 * time.Second

// ServeHTTP serves handler on ln until ctx is done, then shuts the server
// down gracefully and closes every connection in conns with 1001 (going
// away). It returns nil after a clean shutdown and the server's error if it
// stopped by itself.
func ServeHTTP(ctx context.Context, ln net.Listener, handler http.Handler, conns *ConnSet, log *slog.Logger) error {
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute, // idle keep-alive connections are not kept forever
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		if conns != nil {
			conns.CloseAll(1001, "server stopped")
		}
		return err
	case <-ctx.Done():
	}
	if conns != nil {
		conns.CloseAll(1001, "server shutting down")
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		srv.Close()
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return nil
}
