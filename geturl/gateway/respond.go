package gateway

import (
	"net/http"
	"strconv"

	"github.com/hubdev/hub/geturl/engine/replay"
	"github.com/hubdev/hub/geturl/internal/bufpool"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/jsonw"
)

// opaque404 is the one answer for every unknown path, unknown or altered
// token, and token used on the wrong kind of path: byte for byte the same,
// so nothing about tokens can be learned from it.
var opaque404 = []byte(`{"ok":false,"errorCode":"not_found","retryable":false}`)

func (g *Gateway) notFound(w http.ResponseWriter, r *http.Request, rec *record) {
	rec.status, rec.code, rec.bytes = http.StatusNotFound, transport.CodeNotFound, len(opaque404)
	write(w, http.StatusNotFound, ctypeJSON, opaque404)
}

// Header values every answer shares. They are assigned to the header map
// directly (Set would allocate a slice per header per request); net/http
// only reads them, and nothing in this package modifies one in place.
var (
	ctypeJSON = []string{"application/json"}
	ctypeText = []string{"text/plain; charset=utf-8"}
	noStore   = []string{"no-store"}
	noSniff   = []string{"nosniff"}
)

// answerBufLen is the pooled buffer an answer starts in: a /r of one
// ordinary source file fits.
const answerBufLen = 8 << 10

// write sends a complete body with the headers every answer carries: no
// caching anywhere (answers are session state), no sniffing, and the
// length, so net/http sends headers and body without chunking.
func write(w http.ResponseWriter, status int, ctype []string, body []byte) {
	writeLen(w, status, ctype, body, []string{strconv.Itoa(len(body))})
}

// writeLen is write with the Content-Length value already built (clen
// holds len(body) in decimal), for answers rendered ahead of time.
func writeLen(w http.ResponseWriter, status int, ctype []string, body []byte, clen []string) {
	h := w.Header()
	h["Content-Type"] = ctype
	h["Cache-Control"] = noStore
	h["X-Content-Type-Options"] = noSniff
	h["Content-Length"] = clen
	h["Date"] = hub.DateHeader()
	w.WriteHeader(status)
	w.Write(body)
}

// writeJSON marshals v without HTML escaping (exact URLs keep their &).
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) int {
	buf := bufpool.Get(answerBufLen)
	defer bufpool.Put(buf)
	b, err := transport.AppendJSON((*buf)[:0], v)
	if err != nil {
		b, _ = transport.AppendJSON((*buf)[:0], &transport.Error{Code: transport.CodeInternal, Detail: "cannot encode the answer"})
	}
	*buf = b
	write(w, status, ctypeJSON, b)
	return len(b)
}

// answer writes a tool answer (or tool error) as HTTP 200. JSON answers are
// stored in the session's replay store at the level of the base they were
// answered on, so /z?last=1 on that base (or a stronger one) can recover
// any of them; one larger than a range part is served with a rangeFallback object
// as its first key. The stored bytes are the tool's answer itself, which is
// what /z reconstructs. HEAD answers and /z's own are not stored
// (Call.StoresAnswer).
//
// The answer is encoded into a pooled buffer after fallbackRoom bytes left
// free, so a rangeFallback prefix is written in front of it in place rather
// than into a copy; the store keeps its own copy, and the buffer goes back
// to the pool once net/http has written it.
func (g *Gateway) answer(w http.ResponseWriter, r *http.Request, rec *record, c *route.Call, v any, terr *transport.Error) {
	rec.status = http.StatusOK
	if terr != nil {
		rec.code = terr.Code
		v = terr
	}
	if text, ok := v.(route.PlainText); ok {
		rec.bytes = len(text)
		write(w, http.StatusOK, ctypeText, text)
		return
	}
	buf := bufpool.Get(answerBufLen)
	defer bufpool.Put(buf)
	b, err := transport.AppendJSON((*buf)[:fallbackRoom], v)
	if err != nil {
		rec.code = transport.CodeInternal
		b, _ = transport.AppendJSON((*buf)[:fallbackRoom], &transport.Error{Code: transport.CodeInternal, Detail: "cannot encode the answer"})
	}
	*buf = b // keep a grown buffer for the pool
	body := b[fallbackRoom:]
	rec.bytes = len(body)
	if !c.StoresAnswer() {
		write(w, http.StatusOK, ctypeJSON, body)
		return
	}
	id := c.Session.Replay().Put(c.Level(), body) // copies: body may be overwritten below
	if id == "" || len(body) <= replay.PartSize || len(body) < 2 || body[0] != '{' {
		write(w, http.StatusOK, ctypeJSON, body)
		return
	}
	var room [fallbackRoom + 1]byte
	pre := appendRangeFallback(room[:0], c.Base(), id, len(body))
	if len(body) > 2 { // not "{}"
		pre = append(pre, ',')
	}
	var out []byte
	if start := fallbackRoom + 1 - len(pre); start >= 0 {
		out = b[start:] // pre, then body without its '{'
		copy(out, pre)
	} else {
		// A public origin too long for the room: compose a copy.
		o := bufpool.Get(len(pre) + len(body))
		defer bufpool.Put(o)
		out = append(append((*o)[:0], pre...), body[1:]...)
		*o = out
	}
	rec.bytes, rec.fallback = len(out), true
	write(w, http.StatusOK, ctypeJSON, out)
}

// fallbackRoom is the space an answer is encoded after, for its
// rangeFallback prefix: enough for a public origin of about 100 bytes.
const fallbackRoom = 256

// appendRangeFallback appends `{"rangeFallback":{…}` (the answer's first
// key, object still open) for stored response id of n bytes on base.
//
// The object leads a large answer: if the reader cut it short, fetch first,
// then each part's next until hasMore is false, and concatenate the chunks
// (bytes in all). It carries no part count: that would cost a second store
// lookup per large answer, and the range answers say it anyway.
func appendRangeFallback(b []byte, base, id string, n int) []byte {
	b = append(b, `{"rangeFallback":{"id":`...)
	b = jsonw.String(b, id)
	b = append(b, `,"bytes":`...)
	b = jsonw.Int(b, n)
	b = append(b, `,"first":`...)
	// The URL /z?id=<id>&part=0 as transport.URL builds it: ids are
	// lower-case hex behind a "z", which Encode leaves as is (a test checks).
	b = jsonw.String(b, base+"/z?id="+id+"&part=0")
	return append(b, '}')
}
