package aiui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/aiui/tools"
	"github.com/hubdev/hub/hub"
)

// Record is one delivered prompt as the record keeps it and the shell face
// prints it: text exactly as delivered, its meta (kind "prompt" and the
// tab/source attributes), and when.
type Record struct {
	// ID is unique across backends, so two backends sharing the record
	// file merge instead of overwriting each other.
	ID          string            `json:"id"`
	Seq         int64             `json:"seq"`
	At          time.Time         `json:"at"`
	Text        string            `json:"text"`
	Meta        map[string]string `json:"meta"`
	Root        string            `json:"root,omitempty"`
	DeliveredTo string            `json:"deliveredTo,omitempty"`
}

// FaceEvent is one line of an attached face's event stream.
type FaceEvent struct {
	Type      string        `json:"type"` // "prompt" | "page-tools"
	Prompt    *Record       `json:"prompt,omitempty"`
	PageTools *tools.Change `json:"pageTools,omitempty"`
}

// face is one attached agent face (an MCP face process).
type face struct {
	id         string
	cwd        string
	lastActive time.Time
	ch         chan FaceEvent
	assigned   map[int64]bool
}

// follower is a shell `prompts --follow`.
type follower struct{ ch chan Record }

// Outbox records every delivered prompt (0600, bounded) and routes it to
// one attached face. Routing rule: the face whose working directory
// contains, or is contained in, the prompt's source root (the longest such
// directory wins); otherwise the most recently active face. With no face
// attached a prompt waits in the record as pending until a face attaches
// or the shell reads it: nothing is silently dropped.
type Outbox struct {
	mu        sync.Mutex
	path      string
	limit     int
	maxBytes  int // bound of the record file (default maxRecordBytes)
	log       *slog.Logger
	records   []Record
	next      int64
	faces     map[string]*face
	followers map[*follower]struct{}
	closed    bool
}

// maxRecordBytes bounds the prompt record in bytes as well as in count:
// the record is held in memory and rewritten on every delivery.
const maxRecordBytes = 64 << 20

func openOutbox(d hub.Dirs, limit int, log *slog.Logger) (*Outbox, error) {
	if err := hub.EnsurePrivateDir(StateDir(d)); err != nil {
		return nil, err
	}
	o := &Outbox{path: filepath.Join(StateDir(d), "prompts.jsonl"), limit: limit, maxBytes: maxRecordBytes, log: log,
		faces: map[string]*face{}, followers: map[*follower]struct{}{}}
	for _, r := range ReadRecord(o.path) {
		if r.ID == "" {
			r.ID = hub.RandomHex(8)
		}
		o.records = append(o.records, r)
	}
	for _, r := range o.records {
		o.next = max(o.next, r.Seq)
	}
	return o, nil
}

// ReadRecord reads a prompt record file (missing → empty).
func ReadRecord(path string) []Record {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []Record
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var r Record
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Seq > 0 {
			out = append(out, r)
		}
	}
	return out
}

// TakeRecord is the shell's read of the record while no backend runs: it
// returns every prompt and marks the unread ones as read by the shell, so
// the next backend does not hand them to a face a second time.
func TakeRecord(path string) []Record {
	recs := ReadRecord(path)
	changed := false
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range recs {
		if recs[i].DeliveredTo == "" {
			recs[i].DeliveredTo = "shell"
			changed = true
		}
		enc.Encode(recs[i])
	}
	if changed {
		hub.WriteFileAtomic(path, buf.Bytes(), 0o600)
	}
	return recs
}

// persist merges with what is on disk (another backend may share the
// file), trims to the limit and rewrites the record atomically. Caller
// holds mu.
func (o *Outbox) persist() {
	mine := map[string]bool{}
	for _, r := range o.records {
		mine[r.ID] = true
	}
	for _, r := range ReadRecord(o.path) {
		if r.ID != "" && !mine[r.ID] {
			o.records = append(o.records, r)
		}
	}
	sort.SliceStable(o.records, func(i, j int) bool { return o.records[i].At.Before(o.records[j].At) })
	lines := make([][]byte, len(o.records))
	total := 0
	for i, r := range o.records {
		var line bytes.Buffer
		enc := json.NewEncoder(&line)
		enc.SetEscapeHTML(false)
		enc.Encode(r)
		lines[i] = line.Bytes()
		total += len(lines[i])
	}
	drop := max(0, len(o.records)-o.limit)
	for i := 0; i < drop; i++ {
		total -= len(lines[i])
	}
	for drop < len(o.records)-1 && total > o.maxBytes {
		total -= len(lines[drop])
		drop++
	}
	for _, r := range o.records[:drop] {
		if r.DeliveredTo == "" {
			o.log.Warn("prompt record full: an unread prompt is dropped from it", "seq", r.Seq)
		}
	}
	o.records = append([]Record(nil), o.records[drop:]...)
	var buf bytes.Buffer
	for _, l := range lines[drop:] {
		buf.Write(l)
	}
	if err := hub.WriteFileAtomic(o.path, buf.Bytes(), 0o600); err != nil {
		o.log.Error("cannot write the prompt record", "err", err)
	}
}

// Deliver records p and routes it.
func (o *Outbox) Deliver(p channel.Prompt) Record {
	meta := map[string]string{}
	for k, v := range p.Meta {
		meta[k] = v
	}
	meta["kind"] = "prompt"
	o.mu.Lock()
	defer o.mu.Unlock()
	o.next++
	r := Record{ID: hub.RandomHex(8), Seq: o.next, At: time.Now().UTC(), Text: p.Text, Meta: meta, Root: p.Root}
	o.records = append(o.records, r)
	taken := false
	for f := range o.followers {
		select {
		case f.ch <- r:
			taken = true
		default:
			o.log.Warn("a following shell is not keeping up; it misses this prompt", "seq", r.Seq)
		}
	}
	o.route(len(o.records) - 1)
	if last := &o.records[len(o.records)-1]; last.DeliveredTo == "" && taken {
		last.DeliveredTo = "shell" // a following shell printed it
	}
	o.persist()
	return o.records[len(o.records)-1]
}

// Retry routes prompts still pending (e.g. after a face's queue was full).
func (o *Outbox) Retry() {
	o.mu.Lock()
	defer o.mu.Unlock()
	changed := false
	for i := range o.records {
		if o.records[i].DeliveredTo == "" && len(o.faces) > 0 {
			o.route(i)
			changed = changed || o.records[i].DeliveredTo != ""
		}
	}
	if changed {
		o.persist()
	}
}

// route hands the record at index i to a face, if one is attached. Caller
// holds mu.
func (o *Outbox) route(i int) {
	r := &o.records[i]
	f := o.pick(r.Root)
	if f == nil {
		return
	}
	rc := *r
	select {
	case f.ch <- FaceEvent{Type: "prompt", Prompt: &rc}:
		f.assigned[r.Seq] = true
		r.DeliveredTo = "mcp:" + f.id
	default:
		o.log.Warn("agent face is not keeping up; prompt stays pending", "face", f.id, "seq", r.Seq)
	}
}

func within(root, dir string) bool {
	return root == dir || strings.HasPrefix(root, dir+string(filepath.Separator))
}

// pick applies the routing rule. Caller holds mu.
func (o *Outbox) pick(root string) *face {
	var best *face
	if root != "" {
		root = filepath.Clean(root)
		for _, f := range o.faces {
			if f.cwd == "" || !(within(root, f.cwd) || within(f.cwd, root)) {
				continue
			}
			if best == nil || len(f.cwd) > len(best.cwd) || len(f.cwd) == len(best.cwd) && f.lastActive.After(best.lastActive) {
				best = f
			}
		}
		if best != nil {
			return best
		}
	}
	for _, f := range o.faces {
		if best == nil || f.lastActive.After(best.lastActive) {
			best = f
		}
	}
	return best
}

// Attach registers a face and hands it every pending prompt.
func (o *Outbox) Attach(id, cwd string) *face {
	f := &face{id: id, cwd: filepath.Clean(cwd), lastActive: time.Now(), ch: make(chan FaceEvent, 256), assigned: map[int64]bool{}}
	if cwd == "" {
		f.cwd = ""
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.faces[id] = f
	changed := false
	for i := range o.records {
		if o.records[i].DeliveredTo == "" {
			o.route(i)
			changed = true
		}
	}
	if changed {
		o.persist()
	}
	return f
}

// Detach removes a face; prompts it was handed but never confirmed go
// back to pending and are routed again.
func (o *Outbox) Detach(f *face, unconfirmed []int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.faces[f.id] == f {
		delete(o.faces, f.id)
	}
	for _, seq := range unconfirmed {
		for i := range o.records {
			if o.records[i].Seq == seq && o.records[i].DeliveredTo == "mcp:"+f.id {
				o.records[i].DeliveredTo = ""
				o.route(i)
			}
		}
	}
	o.persist()
}

// Touch marks a face as the most recently active.
func (o *Outbox) Touch(id string) {
	o.mu.Lock()
	if f := o.faces[id]; f != nil {
		f.lastActive = time.Now()
	}
	o.mu.Unlock()
}

// Follow snapshots the record for the shell (marking pending prompts as
// read by it) and, when follow is set, returns a channel of new prompts.
func (o *Outbox) Follow(follow bool) ([]Record, *follower) {
	o.mu.Lock()
	defer o.mu.Unlock()
	changed := false
	for i := range o.records {
		if o.records[i].DeliveredTo == "" {
			o.records[i].DeliveredTo = "shell"
			changed = true
		}
	}
	if changed {
		o.persist()
	}
	snap := append([]Record(nil), o.records...)
	if !follow || o.closed {
		return snap, nil
	}
	f := &follower{ch: make(chan Record, 256)}
	o.followers[f] = struct{}{}
	return snap, f
}

// Unfollow stops a follower.
func (o *Outbox) Unfollow(f *follower) {
	o.mu.Lock()
	delete(o.followers, f)
	o.mu.Unlock()
}

// PageToolsChanged fans the directory's change signal out to every face.
func (o *Outbox) PageToolsChanged(c tools.Change) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, f := range o.faces {
		select {
		case f.ch <- FaceEvent{Type: "page-tools", PageTools: &c}:
		default:
		}
	}
}

// FollowerCount is the number of shell followers.
func (o *Outbox) FollowerCount() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.followers)
}

// FaceCount is the number of attached faces.
func (o *Outbox) FaceCount() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.faces)
}

// Pending counts prompts no face or shell has taken yet.
func (o *Outbox) Pending() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, r := range o.records {
		if r.DeliveredTo == "" {
			n++
		}
	}
	return n
}

// Close ends every face stream and follower.
func (o *Outbox) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
}
