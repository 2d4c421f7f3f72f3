package aiui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/aiui/journal"
	"github.com/hubdev/hub/aiui/jsonstr"
	"github.com/hubdev/hub/aiui/tools"
	"github.com/hubdev/hub/hub"
)

// Record is one delivered prompt as the record keeps it and the shell face
// prints it: text exactly as delivered, its meta (kind "prompt" and the
// tab/source attributes), and when.
type Record = journal.Record

// FaceEvent is one line of an attached face's event stream.
type FaceEvent struct {
	Type      string        `json:"type"` // "prompt" | "page-tools"
	Prompt    *Record       `json:"prompt,omitempty"`
	PageTools *tools.Change `json:"pageTools,omitempty"`
}

// promptRef is a queued prompt: an open view of its line in the record,
// read when the event is written (so queues hold no text, and a prompt
// already handed to a face still reaches it if it falls out of the record
// meanwhile); or, when it could not be recorded, the prompt itself.
type promptRef struct {
	seq  int64
	to   string // who had taken it, in a shell's snapshot
	view *journal.View
	rec  *Record
	// claim: the shell took the prompt with this ref (the record says
	// "shell" because of it). Unless some shell prints it, it is unread
	// again when the ref comes back (see Unfollow).
	claim bool
}

// release lets go of the ref's view (idempotent).
func (r promptRef) release() {
	if r.view != nil {
		r.view.Close()
	}
}

// ref opens a queue entry for e. Caller holds mu.
func (o *Outbox) ref(e *journal.Entry) promptRef {
	return promptRef{seq: e.Seq, to: e.To, view: o.j.View(e)}
}

// claim opens a queue entry for e for a shell that takes it (e.To is
// "shell" because of it). Caller holds mu.
func (o *Outbox) claim(e *journal.Entry) promptRef {
	ref := o.ref(e)
	ref.claim = true
	o.claims[e.Seq]++
	return ref
}

// faceEvent is one entry of a face's queue: a prompt or a page-tools
// change.
type faceEvent struct {
	prompt    promptRef
	pageTools *tools.Change
}

// face is one attached agent face (an MCP face process).
type face struct {
	id         string
	cwd        string
	lastActive time.Time
	ch         chan faceEvent
	assigned   map[int64]bool
}

// follower is a shell `prompts --follow`.
type follower struct{ ch chan promptRef }

// Outbox records every delivered prompt (0600, bounded) and routes it to
// one attached face. Routing rule: the face whose working directory
// contains, or is contained in, the prompt's source root (the longest such
// directory wins); otherwise the most recently active face. With no face
// attached a prompt waits in the record as pending until a face attaches
// or the shell reads it: nothing is silently dropped.
type Outbox struct {
	mu        sync.Mutex
	path      string
	j         *journal.Journal
	log       *slog.Logger
	thin      hub.LogThinner // a prompt flood with no face costs log2(n) warnings, not n
	faces     map[string]*face
	followers map[*follower]struct{}
	// watch is closed while a face or following shell is attached, so the
	// record follower ticks only then (see Watched).
	watch  chan struct{}
	closed bool
	// seen is the newest seq this outbox has handed on; a later one in the
	// record was appended by another backend sharing it (see catchUp).
	seen int64
	// claims counts, for each prompt the shell took that no shell has
	// printed yet, the refs to it still held by shells' streams.
	claims map[int64]int
}

// maxRecordBytes bounds the prompt record in bytes as well as in count.
const maxRecordBytes = 64 << 20

func openOutbox(d hub.Dirs, limit int, log *slog.Logger) (*Outbox, error) {
	if err := hub.EnsurePrivateDir(StateDir(d)); err != nil {
		return nil, err
	}
	path := filepath.Join(StateDir(d), "prompts.jsonl")
	j, err := journal.Open(path, limit, maxRecordBytes)
	if err != nil {
		return nil, err
	}
	o := &Outbox{path: path, j: j, log: log, faces: map[string]*face{}, followers: map[*follower]struct{}{}, watch: make(chan struct{}), claims: map[int64]int{}}
	if es := j.Entries(); len(es) > 0 {
		o.seen = es[len(es)-1].Seq // older prompts reach faces when they attach
	}
	j.OnDrop = func(e *journal.Entry) {
		if e.To == "" {
			o.thin.Warn(o.log, "dropped", "prompt record full: an unread prompt is dropped from it", "seq", e.Seq)
		}
	}
	return o, nil
}

// ReadRecord reads a prompt record file (missing → empty).
func ReadRecord(path string) []Record {
	recs, _ := journal.Read(path)
	return recs
}

// TakeRecord is the shell's read of the record while no backend runs: it
// calls each with every prompt and marks the unread ones as read by the
// shell, so the next backend does not hand them to a face a second time.
func TakeRecord(path string, each func(Record) error) error { return journal.Take(path, each) }

// begin opens a journal transaction; on failure the caller goes on in
// memory (end is still to be called). Caller holds mu.
func (o *Outbox) begin() {
	if o.closed {
		return
	}
	if err := o.j.Begin(); err != nil {
		o.log.Error("cannot read the prompt record", "err", err)
		return
	}
	o.catchUp()
}

// catchUp hands on the prompts another backend sharing the record appended
// since this one last looked (Begin has just folded them in), as if they
// had been delivered here: following shells print them, and a pending one
// goes to a face, or else to the following shells. Caller holds mu inside
// a journal transaction.
func (o *Outbox) catchUp() {
	es := o.j.Entries() // oldest first: seqs ascend
	i := len(es)
	for i > 0 && es[i-1].Seq > o.seen {
		i--
	}
	for _, e := range es[i:] {
		if e.To == "" {
			o.route(e)
		}
		takers := o.takers()
		take := e.To == "" && len(takers) > 0
		if take {
			o.j.SetTo(e, "shell")
		}
		for _, fl := range takers {
			if take {
				fl.ch <- o.claim(e)
			} else {
				fl.ch <- o.ref(e)
			}
		}
	}
	if len(es) > 0 {
		o.seen = max(o.seen, es[len(es)-1].Seq)
	}
}

// takers are the following shells with room for one more prompt; one
// without room misses it, with a warning. Caller holds mu.
func (o *Outbox) takers() []*follower {
	var out []*follower
	for fl := range o.followers {
		if len(fl.ch) < cap(fl.ch) {
			out = append(out, fl)
		} else {
			o.thin.Warn(o.log, "slow-follower", "a following shell is not keeping up; it misses a prompt")
		}
	}
	return out
}

// Sync looks for prompts another backend appended to the shared record
// and hands them on (catchUp). The backend calls it every
// RecordCheckInterval while Watched is closed; it costs a lock and a
// stat. It reports whether a face or following shell is still attached.
func (o *Outbox) Sync() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || len(o.faces) == 0 && len(o.followers) == 0 {
		return false
	}
	o.begin()
	o.end()
	return true
}

// Watched returns a channel that is closed while a face or following shell
// is attached: an idle backend then has no timer to wake it every second.
func (o *Outbox) Watched() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.watch
}

// watchChanged closes watch when the first face or follower attaches and
// replaces it when the last one leaves. Caller holds mu.
func (o *Outbox) watchChanged() {
	watched := len(o.faces)+len(o.followers) > 0
	select {
	case <-o.watch:
		if !watched {
			o.watch = make(chan struct{})
		}
	default:
		if watched {
			close(o.watch)
		}
	}
}

func (o *Outbox) end() {
	if o.closed {
		return
	}
	if err := o.j.End(); err != nil {
		o.log.Error("cannot write the prompt record", "err", err)
	}
}

// ErrNotRecorded is returned by Deliver for a prompt it could neither
// record (a full disk, a file size limit) nor hand to anyone at once.
var ErrNotRecorded = errors.New("the prompt could not be recorded and no agent is attached to take it")

// Deliver records p and routes it; it returns the prompt's seq. The text
// is appended to the record (O(prompt)) and not kept in memory. When the
// record cannot be written, a prompt some face or following shell takes
// at once is handed on from memory; one nobody takes fails with
// ErrNotRecorded, so its sender is not told it was delivered.
func (o *Outbox) Deliver(p channel.Prompt) (int64, error) {
	meta := make(map[string]string, len(p.Meta)+1)
	for k, v := range p.Meta {
		meta[k] = v
	}
	meta["kind"] = "prompt"
	body := p.Body
	if body == nil {
		body = new(jsonstr.Buffer)
		body.WriteString(p.Text)
		defer body.Reset()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.begin()
	defer o.end()
	// who takes it: the routed face if it has room, else a following shell
	f := o.pick(p.Root)
	if f != nil && len(f.ch) == cap(f.ch) {
		o.thin.Warn(o.log, "slow-face:"+f.id, "agent face is not keeping up; prompt stays pending", "face", f.id)
		f = nil
	}
	takers := o.takers()
	to := ""
	switch {
	case f != nil:
		to = "mcp:" + f.id
	case len(takers) > 0:
		to = "shell" // a following shell prints it
	}
	var ref promptRef
	e, err := o.j.Append(journal.Prompt{Meta: meta, Root: p.Root, Body: body, To: to})
	switch {
	case err == nil:
		ref = promptRef{seq: e.Seq}
	case to == "":
		// Nobody could take it from memory either: acknowledging it
		// would lose it without a word, so the sender is told instead.
		o.log.Error("cannot record a prompt, and no agent is attached to take it; refused", "err", err)
		return 0, fmt.Errorf("%w: %v", ErrNotRecorded, err)
	default:
		// still hand it on, from memory: a full disk must not eat prompts
		o.log.Error("cannot record a prompt; handing it on unrecorded", "err", err)
		text, _ := jsonstr.Decode(body.Bytes())
		r := &Record{ID: hub.RandomHex(8), Seq: o.j.SkipSeq(), At: time.Now().UTC(), Text: text, Meta: meta, Root: p.Root}
		ref = promptRef{seq: r.Seq, rec: r}
	}
	o.seen = max(o.seen, ref.seq)
	// every sender holds mu and checked for room above, so these never block
	if f != nil {
		if e != nil {
			ref = o.ref(e)
		}
		f.ch <- faceEvent{prompt: ref}
		f.assigned[ref.seq] = true
	}
	for _, fl := range takers {
		switch {
		case e != nil && f == nil:
			ref = o.claim(e)
		case e != nil:
			ref = o.ref(e)
		}
		fl.ch <- ref
	}
	return ref.seq, nil
}

// Retry routes prompts still pending (e.g. after a face's queue was full).
func (o *Outbox) Retry() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.faces) == 0 || o.j.Pending() == 0 {
		return
	}
	o.begin()
	defer o.end()
	for _, e := range o.j.Entries() {
		if e.To == "" {
			o.route(e)
		}
	}
}

// route hands a pending prompt to a face, if one is attached and has
// room. Caller holds mu inside a journal transaction.
func (o *Outbox) route(e *journal.Entry) {
	f := o.pick(e.Root)
	if f == nil {
		return
	}
	if len(f.ch) == cap(f.ch) {
		o.thin.Warn(o.log, "slow-face:"+f.id, "agent face is not keeping up; prompt stays pending", "face", f.id, "seq", e.Seq)
		return
	}
	o.j.SetTo(e, "mcp:"+f.id)
	f.ch <- faceEvent{prompt: o.ref(e)}
	f.assigned[e.Seq] = true
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
	f := &face{id: id, cwd: filepath.Clean(cwd), lastActive: time.Now(), ch: make(chan faceEvent, 256), assigned: map[int64]bool{}}
	if cwd == "" {
		f.cwd = ""
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.faces[id] = f
	o.watchChanged()
	o.begin()
	defer o.end()
	for _, e := range o.j.Entries() {
		if e.To == "" {
			o.route(e)
		}
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
		o.watchChanged()
	}
	if len(unconfirmed) == 0 {
		return
	}
	o.begin()
	defer o.end()
	back := map[int64]bool{}
	for _, seq := range unconfirmed {
		back[seq] = true
	}
	for _, e := range o.j.Entries() {
		if back[e.Seq] && e.To == "mcp:"+f.id {
			o.j.SetTo(e, "")
			o.route(e)
		}
	}
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
// read by it) and, when follow is set, returns a queue of new prompts.
// The snapshot holds references; writeRecord reads each from the record
// (and releases it).
func (o *Outbox) Follow(follow bool) ([]promptRef, *follower) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.begin()
	snap := make([]promptRef, 0, o.j.Len())
	for _, e := range o.j.Entries() {
		if e.To == "" {
			o.j.SetTo(e, "shell")
			snap = append(snap, o.claim(e))
			continue
		}
		snap = append(snap, o.ref(e))
	}
	o.end()
	if !follow || o.closed {
		return snap, nil
	}
	f := &follower{ch: make(chan promptRef, 256)}
	o.followers[f] = struct{}{}
	o.watchChanged()
	return snap, f
}

// Unfollow ends a shell's stream: f (nil: it did not follow) stops
// following, and what the stream was handed but did not print, left and
// what f still queues, comes back. A prompt the shell took that no shell
// printed is unread again, and is routed as one: the record must not
// say a shell read a prompt nobody saw.
func (o *Outbox) Unfollow(f *follower, left []promptRef) {
	if f == nil && len(left) == 0 {
		return
	}
	o.mu.Lock()
	if f != nil {
		delete(o.followers, f)
		o.watchChanged()
	queued:
		for { // every sender holds mu: nothing more comes
			select {
			case ref := <-f.ch:
				left = append(left, ref)
			default:
				break queued
			}
		}
	}
	o.unclaim(left)
	o.mu.Unlock()
	for _, ref := range left {
		ref.release()
	}
}

// printed notes that a shell printed ref's prompt: it is read, whoever
// else held it.
func (o *Outbox) printed(ref promptRef) {
	if ref.to != "shell" {
		return
	}
	o.mu.Lock()
	delete(o.claims, ref.seq)
	o.mu.Unlock()
}

// unclaim gives back the claims of refs a shell's stream did not print;
// a prompt no stream holds any more, and no shell printed, is pending
// again. Caller holds mu.
func (o *Outbox) unclaim(refs []promptRef) {
	back := map[int64]bool{}
	for _, ref := range refs {
		n, held := o.claims[ref.seq]
		switch {
		case !ref.claim || !held: // not the shell's to give back, or printed
		case n > 1:
			o.claims[ref.seq] = n - 1
		default:
			delete(o.claims, ref.seq)
			back[ref.seq] = true
		}
	}
	if len(back) == 0 || o.closed {
		return
	}
	o.begin()
	defer o.end()
	for _, e := range o.j.Entries() {
		if back[e.Seq] && e.To == "shell" {
			o.j.SetTo(e, "")
			o.route(e)
		}
	}
	o.log.Info("a following shell went before it printed every prompt it took; they are unread again", "prompts", len(back))
}

// writeRecord writes ref's prompt to w as one JSON line, wrapped in
// before…after, with deliveredTo set to to, and releases ref. The text
// streams from the record file: memory stays bounded however long the
// prompt, and the outbox is not locked while w blocks. It reports false
// when there was nothing to write (the outbox was closed).
func (o *Outbox) writeRecord(w io.Writer, before string, ref promptRef, to, after string) (bool, error) {
	defer ref.release()
	switch {
	case ref.rec != nil:
		r := *ref.rec
		r.DeliveredTo = to
		b, err := marshalLine(r)
		if err != nil {
			return false, err
		}
		_, err = io.WriteString(w, before+string(b)+after)
		return err == nil, err
	case ref.view == nil:
		return false, nil
	}
	if _, err := io.WriteString(w, before); err != nil {
		return false, err
	}
	if err := ref.view.WriteRecord(w, to); err != nil {
		return false, err
	}
	_, err := io.WriteString(w, after)
	return err == nil, err
}

// marshalLine encodes a record as the record file would hold it.
func marshalLine(r Record) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// writeFaceEvent writes a prompt event of a face's stream.
func (o *Outbox) writeFaceEvent(w io.Writer, ref promptRef) (bool, error) {
	return o.writeRecord(w, `{"type":"prompt","prompt":`, ref, "", "}\n")
}

// PageToolsChanged fans the directory's change signal out to every face.
func (o *Outbox) PageToolsChanged(c tools.Change) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, f := range o.faces {
		select {
		case f.ch <- faceEvent{pageTools: &c}:
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
	return o.j.Pending()
}

// Close ends every face stream and follower and releases the record. A
// prompt the shell took that a stream still going has not printed is
// unread again in the record (printed meanwhile, it is read twice).
func (o *Outbox) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	if len(o.claims) > 0 {
		o.begin()
		for _, e := range o.j.Entries() {
			if o.claims[e.Seq] > 0 && e.To == "shell" {
				o.j.SetTo(e, "")
			}
		}
		o.end()
		clear(o.claims)
	}
	o.closed = true
	o.j.Close()
}
