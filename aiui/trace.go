package aiui

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/jsonw"
)

// Trace bounds: the /debug viewer shows recent threads, not history.
const (
	maxTraces = 64
	maxStages = 256
	// endStages of maxStages are kept for the stages that end a turn, so a
	// long turn whose speculative composes filled its trace still shows
	// what it lowered to.
	endStages      = 16
	maxStageDetail = 4 << 10
	// maxPromptText bounds the lowered prompt a trace keeps: the viewer
	// shows it as the agent received it, so it is cut far later than
	// other details (and still reads as text when cut).
	maxPromptText = 64 << 10
	// maxTraceBlobs bounds the attachments one trace can preview.
	maxTraceBlobs = 128
)

// Thread states.
const (
	stateOpen      = "open"
	stateDelivered = "delivered"
	stateCancelled = "cancelled"
	stateAbandoned = "abandoned"
	stateFailed    = "failed" // a frame was rejected and nothing was delivered
	stateEmpty     = "empty"  // closed with nothing to send
)

// endStage names the stages that end a turn (see endStages).
var endStage = map[string]bool{
	"composed intent": true, "conditioned": true, "lowered prompt": true, "seams": true,
	channel.StageCancelled: true, channel.StageClosed: true, channel.StageAbandoned: true,
}

// trace records one thread's lowering stages as they happen.
type trace struct {
	ID        string      `json:"id"`
	ThreadID  string      `json:"threadId"`
	Format    string      `json:"format"`
	StartedAt time.Time   `json:"startedAt"`
	State     string      `json:"state"`
	Rev       uint64      `json:"rev"`               // the store's version at its last change
	Dropped   int         `json:"dropped,omitempty"` // stages not kept (bounds)
	Blobs     []traceBlob `json:"blobs,omitempty"`
	Stages    []stage     `json:"stages"`

	s        *traceStore
	start    time.Time // with its monotonic reading: offsets survive clock steps
	rejected bool
}

type stage struct {
	At     time.Time       `json:"at"`
	MS     float64         `json:"ms"` // since the trace opened
	Stage  string          `json:"stage"`
	Detail json.RawMessage `json:"detail,omitempty"`
}

// traceBlob is an attachment the viewer may fetch, by Key alone.
type traceBlob struct {
	Key string `json:"key"`
	channel.Blob
}

// traceStore holds the recent traces, the blobs they may preview, and a
// version that every change bumps, so a viewer asks only for what changed.
type traceStore struct {
	mu      sync.Mutex
	traces  []*trace
	blobs   map[string]channel.Blob // opaque key → the file it names
	version uint64
	wake    chan struct{} // closed at the next change (nil: nobody waits)
	viewers int
}

func newTraceStore() *traceStore { return &traceStore{blobs: map[string]channel.Blob{}} }

func (s *traceStore) open(threadID, format string, hello *frame.HelloMeta) *trace {
	now := time.Now()
	t := &trace{ID: "t" + strconv.FormatInt(now.UnixMilli(), 10) + "-" + hex.EncodeToString(hub.RandomBytes(3)),
		ThreadID: threadID, Format: format, StartedAt: now.UTC(), State: stateOpen, s: s, start: now,
		Stages: make([]stage, 0, 4)} // a text thread's: hello, lowered prompt, closed
	s.mu.Lock()
	s.traces = append(s.traces, t)
	if n := len(s.traces) - maxTraces; n > 0 {
		for _, old := range s.traces[:n] {
			for _, b := range old.Blobs {
				delete(s.blobs, b.Key) // its blobs are no longer the viewer's to fetch
			}
		}
		m := copy(s.traces, s.traces[n:])
		clear(s.traces[m:])
		s.traces = s.traces[:m]
	}
	s.bump(t)
	s.mu.Unlock()
	return t
}

// bump records a change of t. Caller holds mu.
// openIDs are the traces of this backend whose turn is still open: their
// directories may still get blobs, so pruning leaves them alone.
func (s *traceStore) openIDs() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := map[string]bool{}
	for _, t := range s.traces {
		if t.State == stateOpen {
			ids[t.ID] = true
		}
	}
	return ids
}

func (s *traceStore) bump(t *trace) {
	s.version++
	t.Rev = s.version
	if s.wake != nil {
		close(s.wake)
		s.wake = nil
	}
}

// changed is closed at the next change. Take it before reading the
// changes, so a change in between is not missed.
func (s *traceStore) changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wake == nil {
		s.wake = make(chan struct{})
	}
	return s.wake
}

func (t *trace) stage(name string, detail any) {
	s := t.s
	s.mu.Lock()
	t.settle(name)
	if b, ok := detail.(channel.Blob); ok {
		// registered even when the stage is not kept: the attachment is
		// still cited by the compose and the prompt
		if tb, ok := t.addBlob(b); ok {
			detail = tb
		}
	}
	room := maxStages - endStages
	if endStage[name] {
		room = maxStages
	}
	full := len(t.Stages) >= room
	if full {
		t.Dropped++
	}
	s.bump(t)
	s.mu.Unlock()
	if full {
		return // dropped before paying for its encoding
	}
	limit := maxStageDetail
	var b []byte
	var err error
	if p, ok := detail.(channel.Prompt); ok {
		p.Text = clipText(p.Text, maxPromptText)
		limit = maxPromptText + maxStageDetail
		b = appendPromptJSON(make([]byte, 0, promptJSONSize(p)), p) // every thread has one: no reflection
	} else {
		b, err = json.Marshal(detail)
	}
	if err != nil {
		b, _ = json.Marshal(fmt.Sprint(detail))
	}
	if len(b) > limit {
		b, _ = json.Marshal(clipText(string(b), limit))
	}
	st := stage{At: time.Now().UTC(), MS: float64(time.Since(t.start).Microseconds()) / 1000, Stage: name, Detail: b}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(t.Stages) >= room {
		t.Dropped++
	} else {
		t.Stages = append(t.Stages, st)
	}
	s.bump(t)
}

// settle moves the thread's state on the stages that end it. Caller
// holds mu.
func (t *trace) settle(name string) {
	switch name {
	case channel.StageRejected:
		t.rejected = true
	case channel.StageCancelled:
		if t.State == stateOpen {
			t.State = stateCancelled
		}
	case channel.StageClosed, channel.StageAbandoned:
		if t.State != stateOpen {
			return
		}
		switch {
		case t.rejected:
			t.State = stateFailed
		case name == channel.StageAbandoned:
			t.State = stateAbandoned
		default:
			t.State = stateEmpty
		}
	}
}

// addBlob issues the viewer's key for a stored attachment. Caller holds mu.
func (t *trace) addBlob(b channel.Blob) (traceBlob, bool) {
	if len(t.Blobs) >= maxTraceBlobs {
		return traceBlob{}, false
	}
	tb := traceBlob{Key: strings.ToLower(hub.RandomHex(12)), Blob: b}
	t.Blobs = append(t.Blobs, tb)
	t.s.blobs[tb.Key] = b
	return tb, true
}

// done marks the thread delivered.
func (t *trace) done(state string) {
	t.s.mu.Lock()
	t.State = state
	t.s.bump(t)
	t.s.mu.Unlock()
}

// blob is the attachment a key names, if a trace still held holds it.
func (s *traceStore) blob(key string) (channel.Blob, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.blobs[key]
	return b, ok
}

// traceView is a trace as a viewer receives it: Stages holds its stages
// from index From on (the viewer had the earlier ones).
type traceView struct {
	trace
	From int `json:"from"`
}

// changes returns the version, the ids of every trace held (oldest first)
// and the traces changed after since. sent, when not nil, counts the
// stages of each trace the reader already has and is brought up to date:
// a trace then carries only its newer stages.
func (s *traceStore) changes(since uint64, sent map[string]int) (uint64, []string, []traceView) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, len(s.traces))
	out := []traceView{}
	for i, t := range s.traces {
		ids[i] = t.ID
		if t.Rev <= since {
			continue
		}
		from := 0
		if sent != nil {
			from = min(sent[t.ID], len(t.Stages))
			sent[t.ID] = len(t.Stages)
		}
		v := traceView{trace: *t, From: from}
		v.Stages = append(make([]stage, 0, len(t.Stages)-from), t.Stages[from:]...)
		v.Blobs = append([]traceBlob(nil), t.Blobs...)
		out = append(out, v)
	}
	if sent != nil && len(sent) > len(ids) {
		held := make(map[string]bool, len(ids))
		for _, id := range ids {
			held[id] = true
		}
		for id := range sent {
			if !held[id] {
				delete(sent, id)
			}
		}
	}
	return s.version, ids, out
}

// clipText cuts s to at most n bytes on a rune boundary, marking the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

var slugUnsafe = regexp.MustCompile(`[^a-z0-9]+`)

// projectDir is $XDG_CACHE_HOME/aiui/projects/<slug>-<hash8> for a source root
// (the hello's meta.source.root, else the backend's working directory).
func projectDir(d hub.Dirs, root string) string {
	slug := strings.Trim(slugUnsafe.ReplaceAllString(strings.ToLower(filepath.Base(root)), "-"), "-")
	if slug == "" {
		slug = "project"
	}
	if len(slug) > 40 {
		slug = slug[:40]
	}
	h := sha256.Sum256([]byte(root))
	return filepath.Join(cacheDir(d), "projects", slug+"-"+hex.EncodeToString(h[:])[:8])
}

// blobDir is the thread's trace blob directory, created 0700 on first use.
func (b *backend) blobDir(ctx *channel.ThreadContext) (string, error) {
	root := b.cwd
	if ctx.Hello != nil && ctx.Hello.Source != nil && filepath.IsAbs(ctx.Hello.Source.Root) {
		root = filepath.Clean(ctx.Hello.Source.Root)
	}
	traces := filepath.Join(projectDir(b.env.Dirs, root), "traces")
	dir := filepath.Join(traces, ctx.TraceID)
	_, err := os.Lstat(dir)
	fresh := errors.Is(err, fs.ErrNotExist)
	if err := hub.EnsurePrivateDir(dir); err != nil {
		return "", err
	}
	if fresh {
		// once per trace, on its first attachment
		open := b.traces.openIDs()
		open[ctx.TraceID] = true
		if n := pruneTraces(traces, open, keepTraceDirs, keepTraceBytes); n > 0 {
			b.env.Log.Info("removed old trace directories", "dir", traces, "count", n)
		}
		if n := pruneAllTraces(filepath.Dir(filepath.Dir(traces)), open, keepAllTraceDirs, keepAllTraceBytes); n > 0 {
			b.env.Log.Info("removed old trace directories of every project", "count", n)
		}
	}
	return dir, nil
}

// promptJSONSize is room for appendPromptJSON's encoding of p as a rule
// (escapes aside), so the buffer is not regrown a dozen times.
func promptJSONSize(p channel.Prompt) int {
	n := len(p.Text) + len(p.Text)/16 + 32
	for k, v := range p.Meta {
		n += len(k) + len(v) + 8
	}
	return n
}

// appendPromptJSON appends p as encoding/json writes it.
func appendPromptJSON(dst []byte, p channel.Prompt) []byte {
	dst = jsonw.StringHTML(append(dst, `{"text":`...), p.Text)
	if len(p.Meta) > 0 {
		dst = append(dst, `,"meta":{`...)
		for i, k := range slices.Sorted(maps.Keys(p.Meta)) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonw.StringHTML(dst, k)
			dst = jsonw.StringHTML(append(dst, ':'), p.Meta[k])
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}
