package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// WriteJSON answers with v as JSON, Content-Type application/json and
// Cache-Control no-store (answers carry session state and must not be cached).
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"ok":false,"error":"internal","message":"cannot encode answer"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h["Date"] = DateHeader()
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// EndWritesWhenDone makes a streaming handler's writes fail StreamDrain
// after the request's context is done (the server stopping): time enough
// to write what the stream already holds to a reader that reads, while a
// reader that stopped reading (a stopped or hung face or shell) would
// otherwise hold the handler, and the server's shutdown, until
// http.Server.Shutdown gives up and closes every connection. Call the
// returned stop before the handler returns.
func EndWritesWhenDone(w http.ResponseWriter, r *http.Request) (stop func() bool) {
	rc := http.NewResponseController(w)
	return context.AfterFunc(r.Context(), func() { rc.SetWriteDeadline(time.Now().Add(StreamDrain)) })
}

// StreamDrain is how long a stream may go on writing once its server
// stops (see EndWritesWhenDone): well under ShutdownGrace.
const StreamDrain = 2 * time.Second

// ReadJSONBody decodes a JSON body of at most limit bytes into v. An empty
// body decodes as nothing. Under ServeHTTP the body must arrive within the
// server's BodyPace for limit bytes (ErrBodyTooSlow otherwise). The error
// says what was wrong, for the caller to answer with 400 (or 413 when
// errors.Is(err, ErrBodyTooLarge)).
func ReadJSONBody(r *http.Request, limit int64, v any) error {
	return ReadJSONBodyWithin(r, limit, nil, v)
}

// ReadJSONBodyWithin is ReadJSONBody for a route anyone may call with a
// large body: a body that may be over BudgetFloor (its Content-Length, or
// limit when unknown) first takes that many bytes from budget, waiting
// for room up to the body's own deadline, and gives them back once
// decoded. Without room in time the error is ErrBusy (answer 503).
func ReadJSONBodyWithin(r *http.Request, limit int64, budget *Budget, v any) error {
	pb, paced := r.Body.(*pacedBody)
	if budget != nil {
		n := limit + 1
		if r.ContentLength >= 0 {
			n = min(n, r.ContentLength)
		}
		if n > BudgetFloor {
			wait := DefaultBudgetWait
			if paced {
				wait = pb.pace.Timeout(limit)
			}
			if err := budget.Acquire(n, wait, r.Context().Done()); err != nil {
				return fmt.Errorf("%w: %v", ErrBusy, err)
			}
			defer budget.Release(n)
		}
	}
	b, err := ReadBody(r, limit)
	if err != nil {
		return err
	}
	return DecodeJSONBody(b, v)
}

// ReadBody reads a body of at most limit bytes as ReadJSONBody does, for a
// route that decodes its own: paced the same, with the same errors.
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	if pb, paced := r.Body.(*pacedBody); paced {
		pb.arm(limit) // sized to this route's limit, from now
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading body: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, limit)
	}
	return b, nil
}

// DecodeJSONBody decodes a body ReadBody read into v as ReadJSONBody
// does: an empty body decodes as nothing.
func DecodeJSONBody(b []byte, v any) error {
	if len(b) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("body is not valid JSON: %v", err)
	}
	return nil
}

// ErrBusy marks a request body that found no room in its route's budget
// in time.
var ErrBusy = errors.New("server busy")

// ErrBodyTooLarge marks a request body over its limit.
var ErrBodyTooLarge = errors.New("body too large")
