package hub

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// ShutdownGrace is how long in-flight HTTP requests get after cancellation.
const ShutdownGrace = 5 * time.Second

// newServer is the http.Server ServeHTTP runs, and the listener it must
// serve (ln under the connection limit).
func newServer(ctx context.Context, ln net.Listener, handler http.Handler, log *slog.Logger) (*http.Server, *connLimit) {
	limited := limitConns(ln, maxConnsFrom(ctx), log)
	return &http.Server{
		Handler:           limited.serve(paceBodies(handler, bodyPaceFrom(ctx))),
		ConnState:         limited.ConnState,
		ConnContext:       limited.ConnContext,
		ReadHeaderTimeout: headerTimeoutFrom(ctx),
		MaxHeaderBytes:    MaxRequestHeaderBytes,
		IdleTimeout:       2 * time.Minute, // idle keep-alive connections are not kept forever
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}, limited
}

// Hijacked are the connections a server's handlers took over (upgraded
// WebSockets, ws.Sockets): ServeHTTP routes their handlers' panics to the
// run's Guard, and closes them and waits for them at shutdown, which
// http.Server.Shutdown does not.
type Hijacked interface {
	SetGuard(*Guard)
	Shutdown(code uint16, reason string)
	Wait()
}

// ServeHTTP serves handler on ln until ctx is done, then shuts the server
// down gracefully, closes every socket in sockets (nil: none) with 1001
// (going away) and waits for their read loops. It returns nil after a clean
// shutdown and the server's error if it stopped by itself. Every request
// body must arrive within the BodyPace of ctx (see WithBodyPace, and
// ReadJSONBody for a route's own limit). Request headers are bounded by
// MaxRequestHeaderBytes and must arrive within the HeaderTimeout of ctx
// (DefaultHeaderTimeout unless WithHeaderTimeout says otherwise); the open
// HTTP connections are bounded by the MaxConns of ctx (DefaultMaxConns
// unless WithMaxConns says otherwise), a new one evicting one that is not
// being served when all are taken.
func ServeHTTP(ctx context.Context, ln net.Listener, handler http.Handler, sockets Hijacked, log *slog.Logger) error {
	srv, limited := newServer(ctx, ln, handler, log)
	if g := GuardFrom(ctx); g != nil && sockets != nil {
		sockets.SetGuard(g) // a handler's panic restarts this adapter, not the process
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(limited) }()
	select {
	case err := <-errc:
		if sockets != nil {
			sockets.Shutdown(1001, "server stopped")
			sockets.Wait()
		}
		return err
	case <-ctx.Done():
	}
	if sockets != nil {
		sockets.Shutdown(1001, "server shutting down")
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		srv.Close()
	}
	serr := <-errc
	if sockets != nil {
		sockets.Wait()
	}
	if serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return nil
}
