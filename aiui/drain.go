package aiui

import (
	"context"
	"net/http"
	"time"

	"github.com/hubdev/hub/hub"
)

// drainWriter is a stream's ResponseWriter while its server may stop. Once
// the request's context is done (the backend stopping), every write and
// flush must go through within hub.StreamDrain of its start: a reader that
// stopped reading (a stopped or hung shell) is cut then, so it cannot hold
// up the stop. A reader that goes on taking what the stream writes is not
// cut by it, however long what the stream still holds takes to write: the
// deadline moves with every write. What bounds the whole drain is the
// stop's own grace (hub.ShutdownGrace).
//
// Writes reach the connection at most as large as the caller's: a reader
// is given StreamDrain for every such piece (64 KiB from writeRecord).
type drainWriter struct {
	http.ResponseWriter
	rc       *http.ResponseController
	stopping <-chan struct{}
	stop     func() bool
}

// newDrainWriter wraps w for r's stream. Call end before the handler
// returns.
func newDrainWriter(w http.ResponseWriter, r *http.Request) *drainWriter {
	d := &drainWriter{ResponseWriter: w, rc: http.NewResponseController(w), stopping: r.Context().Done()}
	// a write already blocked when the stop comes gets its deadline here
	d.stop = context.AfterFunc(r.Context(), d.extend)
	return d
}

func (d *drainWriter) extend() { d.rc.SetWriteDeadline(time.Now().Add(hub.StreamDrain)) }

// renew gives the next write its own StreamDrain once the stop has begun.
func (d *drainWriter) renew() {
	select {
	case <-d.stopping:
		d.extend()
	default:
	}
}

func (d *drainWriter) Write(p []byte) (int, error) {
	d.renew()
	return d.ResponseWriter.Write(p)
}

// Flush writes what is buffered, within its own StreamDrain once the stop
// has begun.
func (d *drainWriter) Flush() { _ = d.FlushError() }

// FlushError is Flush, and says whether what was buffered reached the
// connection: a write that went only into the buffer has not.
func (d *drainWriter) FlushError() error {
	d.renew()
	return d.rc.Flush()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (d *drainWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// end stops the stop's deadline from being set after the handler returned.
func (d *drainWriter) end() { d.stop() }
