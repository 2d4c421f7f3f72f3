package aiui

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/hub"
)

// Trace bounds: the /debug viewer shows recent threads, not history.
const (
	maxTraces      = 64
	maxStages      = 256
	maxStageDetail = 4 << 10
)

// trace records one thread's lowering stages as they happen.
type trace struct {
	ID        string    `json:"id"`
	ThreadID  string    `json:"threadId"`
	Format    string    `json:"format"`
	StartedAt time.Time `json:"startedAt"`
	State     string    `json:"state"` // open, sent, closed, abandoned
	Stages    []stage   `json:"stages"`
	mu        *sync.Mutex
}

type stage struct {
	At     time.Time       `json:"at"`
	Stage  string          `json:"stage"`
	Detail json.RawMessage `json:"detail,omitempty"`
}

type traceStore struct {
	mu     sync.Mutex
	traces []*trace
}

func newTraceStore() *traceStore { return &traceStore{} }

func (s *traceStore) open(threadID, format string, hello *frame.HelloMeta) *trace {
	t := &trace{ID: fmt.Sprintf("t%d-%s", time.Now().UnixMilli(), strings.ToLower(hub.RandomHex(3))),
		ThreadID: threadID, Format: format, StartedAt: time.Now().UTC(), State: "open", mu: &s.mu}
	s.mu.Lock()
	s.traces = append(s.traces, t)
	if len(s.traces) > maxTraces {
		s.traces = s.traces[len(s.traces)-maxTraces:]
	}
	s.mu.Unlock()
	return t
}

func (t *trace) stage(name string, detail any) {
	t.mu.Lock()
	if name == "abandoned" {
		t.State = "abandoned"
	}
	full := len(t.Stages) >= maxStages
	t.mu.Unlock()
	if full {
		return // dropped before paying for its encoding
	}
	b, err := json.Marshal(detail)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprint(detail))
	}
	if len(b) > maxStageDetail {
		b, _ = json.Marshal(string(b[:maxStageDetail]) + "…")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.Stages) < maxStages {
		t.Stages = append(t.Stages, stage{At: time.Now().UTC(), Stage: name, Detail: b})
	}
}

func (t *trace) done(state string) {
	t.mu.Lock()
	t.State = state
	t.mu.Unlock()
}

func (s *traceStore) list() []trace {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]trace, len(s.traces))
	for i, t := range s.traces {
		out[i] = *t
		out[i].Stages = append([]stage(nil), t.Stages...)
	}
	return out
}

var slugUnsafe = regexp.MustCompile(`[^a-z0-9]+`)

// projectDir is ~/.cache/aiui/projects/<slug>-<hash8> for a source root
// (the hello's meta.source.root, else the backend's working directory).
func projectDir(home, root string) string {
	slug := strings.Trim(slugUnsafe.ReplaceAllString(strings.ToLower(filepath.Base(root)), "-"), "-")
	if slug == "" {
		slug = "project"
	}
	if len(slug) > 40 {
		slug = slug[:40]
	}
	h := sha256.Sum256([]byte(root))
	return filepath.Join(home, ".cache", "aiui", "projects", slug+"-"+hex.EncodeToString(h[:])[:8])
}

// blobDir is the thread's trace blob directory, created 0700 on first use.
func (b *backend) blobDir(ctx *channel.ThreadContext) (string, error) {
	root := b.cwd
	if ctx.Hello != nil && ctx.Hello.Source != nil && filepath.IsAbs(ctx.Hello.Source.Root) {
		root = filepath.Clean(ctx.Hello.Source.Root)
	}
	dir := filepath.Join(projectDir(b.env.Dirs.Home, root), "traces", ctx.TraceID)
	if err := hub.EnsurePrivateDir(dir); err != nil {
		return "", err
	}
	return dir, nil
}
