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

// ServeHTTP serves handler on ln until ctx is done, then shuts the server
// down gracefully, closes every socket in sockets (nil: none) with 1001
// (going away) and waits for their read loops. It returns nil after a clean
// shutdown and the server's error if it stopped by itself. Every request
// body must arrive within the BodyPace of ctx (see WithBodyPace, and
// ReadJSONBody for a route's own limit). Request headers are bounded by
// MaxRequestHeaderBytes and the open connections by the MaxConns of ctx
// (DefaultMaxConns unless WithMaxConns says otherwise).
func ServeHTTP(ctx context.Context, ln net.Listener, handler http.Handler, sockets *Sockets, log *slog.Logger) error {
	limited := limitConns(ln, maxConnsFrom(ctx), log)
	srv := &http.Server{
		Handler:           paceBodies(handler, bodyPaceFrom(ctx)),
		ConnState:         limited.ConnState,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    MaxRequestHeaderBytes,
		IdleTimeout:       2 * time.Minute, // idle keep-alive connections are not kept forever
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
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
