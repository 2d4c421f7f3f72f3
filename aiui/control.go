package aiui

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/hubdev/hub/aiui/tools"
	"github.com/hubdev/hub/hub"
)

// FaceHeader names the attached face a control request comes from, so its
// activity counts for routing.
const FaceHeader = "X-Aiui-Face"

// streamKeepalive is how often an idle event stream writes a ping line, so
// a dead face is noticed and its prompts re-routed.
var streamKeepalive = 15 * time.Second

// control is the authenticated local control route the shell and MCP faces
// use. A request carrying any Origin header is refused before the key is
// looked at (pages always send one; shells and agents never do), so page
// tools are never callable by an unauthenticated or browser request.
func (b *backend) control() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /control/info", func(w http.ResponseWriter, r *http.Request) { hub.WriteJSON(w, 200, b.info()) })
	mux.HandleFunc("GET /control/tools", func(w http.ResponseWriter, r *http.Request) {
		hub.WriteJSON(w, 200, map[string]any{"ok": true, "registrations": nonNil(b.dir.List()), "clients": b.dir.Summary().Clients})
	})
	mux.HandleFunc("POST /control/call", b.controlCall)
	mux.HandleFunc("POST /control/reload", func(w http.ResponseWriter, r *http.Request) { hub.WriteJSON(w, 200, b.reload()) })
	mux.HandleFunc("GET /control/prompts", b.controlPrompts)
	mux.HandleFunc("GET /control/events", b.controlEvents)
	gate := hub.KeyGate{Header: "Authorization", Key: b.controlKey, Port: func() int { return b.port }}
	return gate.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.agentActivity()
		if id := r.Header.Get(FaceHeader); id != "" {
			b.outbox.Touch(id)
		}
		mux.ServeHTTP(w, r)
	}))
}

func nonNil(l []tools.Registration) []tools.Registration {
	if l == nil {
		return []tools.Registration{}
	}
	return l
}

// CallResult is the control route's answer to a call.
type CallResult struct {
	OK         bool              `json:"ok"`
	Value      json.RawMessage   `json:"value,omitempty"`
	Error      string            `json:"error,omitempty"`
	ErrorKind  string            `json:"errorKind,omitempty"` // route | tool
	Candidates []tools.Candidate `json:"candidates,omitempty"`
	// Code is a tool error's fate when the page did not answer:
	// tools.OutcomeUnknown or tools.Busy.
	Code string `json:"code,omitempty"`
	// RouteError is a route error's message without its candidates.
	RouteError string `json:"routeError,omitempty"`
}

func (b *backend) controlCall(w http.ResponseWriter, r *http.Request) {
	var req tools.CallRequest
	if err := hub.ReadJSONBody(r, int64(b.cfg.MaxMessageBytes), &req); err != nil {
		hub.WriteJSON(w, http.StatusBadRequest, CallResult{Error: err.Error(), ErrorKind: "usage"})
		return
	}
	v, err := b.dir.Call(r.Context(), req)
	if err != nil {
		res := CallResult{Error: err.Error(), ErrorKind: "tool"}
		var re *tools.RouteError
		var te *tools.ToolError
		if errors.As(err, &re) {
			res.ErrorKind, res.Candidates, res.RouteError = "route", re.Candidates, re.Msg
		} else if errors.As(err, &te) {
			res.Code = te.Code
		} else if r.Context().Err() != nil {
			// the backend is stopping (or the caller left) while the page
			// may hold the call: its fate is unknown, not the page's refusal
			res.Code = tools.OutcomeUnknown
			res.Error = "the backend stopped before the page answered: " + res.Error
		}
		hub.WriteJSON(w, http.StatusOK, res)
		return
	}
	hub.WriteJSON(w, http.StatusOK, CallResult{OK: true, Value: v})
}

// ndjson starts a streamed answer of JSON lines.
func ndjson(w http.ResponseWriter) (func(v any) error, bool) {
	fl, ok := w.(http.Flusher)
	if !ok {
		return nil, false
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return func(v any) error {
		if err := enc.Encode(v); err != nil {
			return err
		}
		fl.Flush()
		return nil
	}, true
}

func (b *backend) controlPrompts(w http.ResponseWriter, r *http.Request) {
	follow := r.URL.Query().Get("follow") == "1"
	snap, f := b.outbox.Follow(follow)
	// What the stream was handed and did not print goes back to the
	// outbox when it ends, however it ends (see Unfollow).
	var left []promptRef
	defer func() { b.outbox.Unfollow(f, left) }()
	if _, ok := ndjson(w); !ok {
		left = snap
		return
	}
	dw := newDrainWriter(w, r)
	defer dw.end()
	// emit prints ref; false when the stream is over
	emit := func(ref promptRef) bool {
		printed, err := b.printShell(dw, ref)
		if !printed {
			left = append(left, ref)
		}
		return err == nil
	}
	// each prompt streams from the record file, one at a time
	for i, ref := range snap {
		if !emit(ref) {
			left = append(left, snap[i+1:]...)
			return
		}
	}
	if f == nil {
		return
	}
	tick := time.NewTicker(streamKeepalive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			// prompts already handed to this shell are its own: they
			// are written before it goes, for as long as it reads them
			// (drainWriter cuts a shell that stopped reading)
			for {
				select {
				case ref := <-f.ch:
					if !emit(ref) {
						return
					}
				default:
					return
				}
			}
		case ref := <-f.ch:
			if !emit(ref) {
				return
			}
		case <-tick.C:
			if _, err := dw.Write([]byte("\n")); err != nil {
				return
			}
			dw.Flush()
		}
	}
}

// printShell writes ref's prompt to a shell's stream as one line and
// flushes it: once the line has reached the connection, the shell has
// printed it (Outbox.printed). A write can succeed into the response's
// buffer with the line's end still in it, so a failed flush means not
// printed. deliveredTo says who took it: a script following prompts acts
// on the shell's, not on those a face took. A prompt the record can no
// longer give is skipped (printed false, no error); an error ends the
// stream.
func (b *backend) printShell(w *drainWriter, ref promptRef) (printed bool, err error) {
	if ok, err := b.outbox.writeRecord(w, "", ref, ref.to, "\n"); !ok || err != nil {
		return false, err
	}
	if err := w.FlushError(); err != nil {
		return false, err
	}
	b.outbox.printed(ref)
	return true, nil
}

// controlEvents is an attached face's stream: pending prompts first, then
// every prompt routed to it and every page-tools change.
func (b *backend) controlEvents(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if id == "" || len(id) > 128 {
		hub.WriteJSON(w, http.StatusBadRequest, map[string]any{"ok": false, "error": "events needs ?id=<face id>"})
		return
	}
	write, ok := ndjson(w)
	if !ok {
		return
	}
	defer hub.EndWritesWhenDone(w, r)()
	f := b.outbox.Attach(id, r.URL.Query().Get("cwd"))
	b.log.Info("agent face attached", "face", id, "cwd", f.cwd)
	confirmed := map[int64]bool{}
	defer func() {
		var unconfirmed []int64
	drain:
		for {
			select {
			case ev := <-f.ch:
				if ev.pageTools == nil {
					unconfirmed = append(unconfirmed, ev.prompt.seq)
					ev.prompt.release()
				}
			default:
				break drain
			}
		}
		b.outbox.mu.Lock()
		for seq := range f.assigned {
			if !confirmed[seq] {
				unconfirmed = append(unconfirmed, seq)
			}
		}
		b.outbox.mu.Unlock()
		b.outbox.Detach(f, unconfirmed)
		b.log.Info("agent face detached", "face", id)
	}()
	tick := time.NewTicker(streamKeepalive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case ev := <-f.ch:
			if ev.pageTools != nil {
				if write(FaceEvent{Type: "page-tools", PageTools: ev.pageTools}) != nil {
					return
				}
				continue
			}
			// the prompt streams from the record file into the event line
			if _, err := b.outbox.writeFaceEvent(w, ev.prompt); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			confirmed[ev.prompt.seq] = true
			if len(f.ch) == 0 && b.outbox.Pending() > 0 {
				b.outbox.Retry()
			}
		case <-tick.C:
			if write(FaceEvent{Type: "ping"}) != nil {
				return
			}
		}
	}
}
