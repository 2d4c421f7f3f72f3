package gateway

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/hubdev/hub/geturl/kernel"
	"github.com/hubdev/hub/geturl/replay"
	"github.com/hubdev/hub/geturl/transport"
)

// opaque404 is the one answer for every unknown path, unknown or altered
// token, and token used on the wrong kind of path: byte for byte the same,
// so nothing about tokens can be learned from it.
var opaque404 = []byte(`{"ok":false,"errorCode":"not_found","retryable":false}`)

func (g *Gateway) notFound(w http.ResponseWriter, r *http.Request, rec *record) {
	rec.status, rec.code, rec.bytes = http.StatusNotFound, transport.CodeNotFound, len(opaque404)
	write(w, http.StatusNotFound, "application/json", opaque404)
}

// write sends a complete body with the headers every answer carries: no
// caching anywhere (answers are session state), no sniffing.
func write(w http.ResponseWriter, status int, ctype string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// writeJSON marshals v without HTML escaping (exact URLs keep their &).
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) int {
	b, err := transport.Marshal(v)
	if err != nil {
		b, _ = transport.Marshal(&transport.Error{Code: transport.CodeInternal, Detail: "cannot encode the answer"})
	}
	write(w, status, "application/json", b)
	return len(b)
}

// answer writes a tool answer (or tool error) as HTTP 200. JSON answers are
// stored in the session's replay store, so /z?last=1 can recover any of
// them; one larger than a range part is served with a rangeFallback object
// as its first key. The stored bytes are the tool's answer itself, which is
// what /z reconstructs. HEAD answers are neither stored nor counted.
func (g *Gateway) answer(w http.ResponseWriter, r *http.Request, rec *record, c *kernel.Call, v any, terr *transport.Error) {
	rec.status = http.StatusOK
	if terr != nil {
		rec.code = terr.Code
		v = terr
	}
	if text, ok := v.(kernel.PlainText); ok {
		rec.bytes = len(text)
		write(w, http.StatusOK, "text/plain; charset=utf-8", text)
		return
	}
	body, err := transport.Marshal(v)
	if err != nil {
		rec.code = transport.CodeInternal
		body, _ = transport.Marshal(&transport.Error{Code: transport.CodeInternal, Detail: "cannot encode the answer"})
	}
	rec.bytes = len(body)
	if c.Head || c.Session.Replay() == nil {
		write(w, http.StatusOK, "application/json", body)
		return
	}
	store := c.Session.Replay()
	id := store.Put(body)
	if id == "" || len(body) <= replay.PartSize || len(body) < 2 || body[0] != '{' {
		write(w, http.StatusOK, "application/json", body)
		return
	}
	fb, _ := transport.Marshal(rangeFallback{
		ID: id, Bytes: len(body),
		First: c.URL("/z", new(transport.Query).Add("id", id).Add("part", "0")),
	})
	var out bytes.Buffer
	out.Grow(len(body) + len(fb) + 20)
	out.WriteString(`{"rangeFallback":`)
	out.Write(fb)
	if len(body) > 2 { // not "{}"
		out.WriteByte(',')
	}
	out.Write(body[1:])
	rec.bytes, rec.fallback = out.Len(), true
	write(w, http.StatusOK, "application/json", out.Bytes())
}

// rangeFallback leads a large answer: if the reader cut it short, fetch
// First, then each part's next until hasMore is false, and concatenate the
// chunks (Bytes in all). It carries no part count: that would cost a second
// store lookup per large answer, and the range answers say it anyway.
type rangeFallback struct {
	ID    string `json:"id"`
	Bytes int    `json:"bytes"`
	First string `json:"first"`
}
