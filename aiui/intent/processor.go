package intent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/hub"
)

// Deps are the server-side seams and settings the intent-v1 processor uses.
type Deps struct {
	// NewOpenAI returns the REST client for one thread (the key is read
	// from the environment at thread open).
	NewOpenAI func() *OpenAI
	// TranscribeModel and CorrectionModel are used when the hello's intent
	// config names none.
	TranscribeModel string
	CorrectionModel string
	RealtimeModel   string
	// BlobDir returns (creating it) the thread's trace blob directory.
	BlobDir func(ctx *channel.ThreadContext) (string, error)
	// FinWait bounds how long fin waits for in-flight transcriptions and
	// corrections before composing (default 10 s).
	FinWait time.Duration
	// Realtime dials the upstream realtime transcriber; nil means none.
	Realtime RealtimeDialer
	// MaxTurnEventBytes bounds the bytes of one turn's events chunks
	// (0: DefaultMaxTurnEventBytes).
	MaxTurnEventBytes int64
	// MaxTurnBlobBytes bounds the attachment and streamed-audio bytes one
	// turn stores in the blob store (0: DefaultMaxTurnBlobBytes).
	MaxTurnBlobBytes int64
	// Guard runs the seams' goroutines (nil: plainly); the seams' context
	// carries it to the realtime dialer.
	Guard *hub.Guard
}

// Format is the intent-v1 format: raw codec, chunk-tagged payloads.
func Format(d *Deps) channel.Format {
	return channel.Format{Codec: frame.Raw, New: func(ctx *channel.ThreadContext) channel.Processor { return newProcessor(ctx, d) }}
}

// Per-thread bounds on what lands on disk.
const (
	MaxAttachments   = 512
	MaxAudioSegments = 64
	// Byte budgets of one turn: counts alone would still let one thread
	// hold gigabytes (every frame may be MaxFrameBytes).
	DefaultMaxTurnEventBytes = 16 << 20
	DefaultMaxTurnBlobBytes  = 512 << 20
)

func (d *Deps) maxEventBytes() int64 {
	if d.MaxTurnEventBytes > 0 {
		return d.MaxTurnEventBytes
	}
	return DefaultMaxTurnEventBytes
}

func (d *Deps) maxBlobBytes() int64 {
	if d.MaxTurnBlobBytes > 0 {
		return d.MaxTurnBlobBytes
	}
	return DefaultMaxTurnBlobBytes
}

var attachmentID = regexp.MustCompile(`^(shot|seg)_([1-9][0-9]{0,5})$`)

// Processor lowers one intent-v1 thread.
type Processor struct {
	ctx    *channel.ThreadContext
	deps   *Deps
	cfg    Config
	cfgErr error
	oa     *OpenAI

	seamCtx    context.Context
	seamCancel context.CancelFunc
	inflight   sync.WaitGroup

	mu        sync.Mutex
	events    []Event
	mutations int
	cache     *Composed
	cacheAt   int
	blobs     map[string]string // attachment id → absolute path
	blobSize  map[string]int64  // attachment id → bytes stored
	passes    map[string]string // attachment id → the condition pass it went through
	blobBytes int64             // sum of blobSize
	evBytes   int64             // bytes of events chunks so far
	audio     map[int]*os.File  // streamed realtime segments
	pushed    map[string]bool   // server-produced events, to drop client echoes
	selection string
	rt        RealtimeSession
	rtErr     error
	done      bool
	// corrections counts the correction diffs requested upstream
	// (MaxCorrectionRequests), fixes the correction events of the turn
	// (MaxCorrectionsPerTurn).
	corrections, fixes int
	specWork           int // maxSpeculateWork spent
}

func newProcessor(ctx *channel.ThreadContext, d *Deps) *Processor {
	p := &Processor{ctx: ctx, deps: d, blobs: map[string]string{}, blobSize: map[string]int64{}, passes: map[string]string{}, audio: map[int]*os.File{}, pushed: map[string]bool{}}
	p.seamCtx, p.seamCancel = context.WithCancel(hub.WithGuard(context.Background(), d.Guard))
	var raw json.RawMessage
	if ctx.Hello != nil {
		raw = ctx.Hello.Intent
	}
	p.cfg, p.cfgErr = ParseConfig(raw)
	if d.NewOpenAI != nil {
		p.oa = d.NewOpenAI()
	}
	ctx.Trace("client context", ctx.Hello)
	ctx.Trace("prompt preamble", channel.Preamble(ctx.Hello, ""))
	if p.cfgErr == nil && p.cfg.Transcriber == TranscriberRealtime {
		p.openRealtime()
	}
	return p
}

// OnMessage handles one chunk.
func (p *Processor) OnMessage(payload any, meta channel.MessageMeta) error {
	if p.cfgErr != nil {
		return p.cfgErr
	}
	b, _ := payload.([]byte)
	if meta.Chunk == nil {
		if len(b) > 0 {
			return errors.New("intent-v1 data with a payload needs a chunk descriptor")
		}
	} else if err := p.chunk(meta.Chunk, b); err != nil {
		return err
	}
	if meta.Fin {
		return p.fin()
	}
	return nil
}

func (p *Processor) chunk(c *frame.ChunkDescriptor, b []byte) error {
	switch c.Kind {
	case "events":
		if limit := p.deps.maxEventBytes(); p.evBytes+int64(len(b)) > limit {
			return fmt.Errorf("turn exceeds %d bytes of events", limit)
		}
		p.mu.Lock()
		room := MaxEventsPerTurn - len(p.events)
		p.mu.Unlock()
		ev, err := ParseBatchMax(b, room)
		if err != nil {
			return err
		}
		if err := p.addEvents(ev, heldEventBytes(b, ev)); err != nil {
			return err
		}
		p.evBytes += int64(len(b))
		return nil
	case "attachment":
		return p.attachment(c, b)
	case "audio":
		return p.audioFrame(c, b)
	case "context":
		var ctx struct {
			Selection json.RawMessage `json:"selection"`
		}
		if err := json.Unmarshal(b, &ctx); err != nil {
			return fmt.Errorf("context chunk is not { selection? }: %v", err)
		}
		p.mu.Lock()
		p.selection = selectionText(ctx.Selection)
		p.mutations++
		p.mu.Unlock()
		p.ctx.Trace("context", p.selection)
		return nil
	}
	return fmt.Errorf("unknown chunk kind %q", c.Kind)
}

// eventSize is what one parsed event costs in memory beyond its wire
// bytes: the Event struct itself, several times a small event's JSON.
const eventSize = int64(unsafe.Sizeof(Event{}))

// heldEventBytes is what a parsed batch holds against the connection's
// budget: its wire bytes (the strings decoded from them) and the events.
// Counting the wire bytes alone let a connection's threads hold some 60
// times the budget as parsed events.
func heldEventBytes(wire []byte, ev []Event) int64 {
	return int64(len(wire)) + int64(len(ev))*eventSize
}

// selectionText accepts a string or an object with a text field.
func selectionText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &o)
	return o.Text
}

// addEvents adds a parsed batch, reserving held bytes of the connection's
// budget for it once it passes the turn's caps: a refused batch is
// dropped, so it holds nothing.
func (p *Processor) addEvents(ev []Event, held int64) error {
	p.mu.Lock()
	if len(p.events)+len(ev) > MaxEventsPerTurn {
		p.mu.Unlock()
		return fmt.Errorf("turn exceeds %d events", MaxEventsPerTurn)
	}
	fixes := p.newCorrections(ev)
	if p.fixes+fixes > MaxCorrectionsPerTurn {
		p.mu.Unlock()
		return fmt.Errorf("turn exceeds %d corrections", MaxCorrectionsPerTurn)
	}
	if p.ctx.Hold != nil {
		if err := p.ctx.Hold(held); err != nil {
			p.mu.Unlock()
			return err
		}
	}
	p.fixes += fixes
	var requests, refused []int
	var talkEnds []int
	p.events = slices.Grow(p.events, len(ev)) // one allocation, not a growth per event
	for _, e := range ev {
		if k, _ := json.Marshal(e); p.pushed[string(k)] {
			continue // the client echoed an event this server produced
		}
		if e.Type == TypeShot {
			// the path is the channel's to wire, to the bytes it stored: one
			// the client wrote in would go to the agent as the shot_N to
			// read, naming any file at all
			e.Path = p.blobs[e.Marker]
		}
		p.events = append(p.events, e)
		if e.Type == TypeCorrection && e.Patch == "" && p.cfg.Corrector == "openai" {
			if p.corrections < MaxCorrectionRequests {
				p.corrections++
				requests = append(requests, len(p.events)-1)
			} else {
				refused = append(refused, len(p.events)-1)
			}
		}
		if e.Type == TypeTalkEnd && p.cfg.Transcriber == TranscriberRealtime {
			talkEnds = append(talkEnds, e.Segment)
		}
	}
	p.mutations++
	p.speculate()
	p.mu.Unlock()
	for _, i := range requests {
		p.correct(i)
	}
	p.refuseCorrections(refused)
	for _, seg := range talkEnds {
		p.commitRealtime(seg)
	}
	return nil
}

// MaxCorrectionsPerTurn bounds the correction events of one turn. Each
// one is applied to the whole transcript whenever the turn is composed,
// so composing costs corrections × transcript: 20,000 corrections over
// 20,000 segments held a connection for half a minute of CPU at fin. A
// person corrects a dictation a handful of times.
const MaxCorrectionsPerTurn = 256

// newCorrections counts the correction events in ev that are not echoes
// of ones this server pushed (those are skipped, not added). Called with
// p.mu held.
func (p *Processor) newCorrections(ev []Event) int {
	n := 0
	for _, e := range ev {
		if e.Type != TypeCorrection {
			continue
		}
		if k, _ := json.Marshal(e); !p.pushed[string(k)] {
			n++
		}
	}
	return n
}

// MaxCorrectionRequests bounds the server-side correction diffs one turn
// asks for. Each is a paid upstream call and composes the log before it:
// a batch of 20,000 bare correction requests kept a connection busy for
// minutes of CPU. A person corrects a dictation a handful of times.
const MaxCorrectionRequests = 64

// refuseCorrections pushes back the correction requests past
// MaxCorrectionRequests without a patch, in one lowered message, as a
// failed diff is: the client falls back to plain replacement, and the
// note says why.
func (p *Processor) refuseCorrections(idx []int) {
	if len(idx) == 0 {
		return
	}
	note := fmt.Sprintf("correction diff not run: this turn asked for more than %d", MaxCorrectionRequests)
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return
	}
	out := make([]Event, len(idx))
	for n, i := range idx {
		e := p.events[i]
		e.Note = note
		p.events[i] = e
		k, _ := json.Marshal(e)
		p.pushed[string(k)] = true
		out[n] = e
	}
	p.mutations++
	p.speculate()
	p.mu.Unlock()
	p.ctx.Trace("merged events", fmt.Sprintf("%d correction requests past %d, not diffed", len(idx), MaxCorrectionRequests))
	p.ctx.Push(map[string]any{"kind": "lowered", "threadId": p.ctx.ThreadID, "events": out})
}

// maxSpeculateEvents bounds speculative composition: past it a batch only
// invalidates the cache (the mutation counter moved) and fin composes
// once, so a turn of many tiny batches cannot cost quadratic CPU. Real
// turns are tens to a few thousand events.
const maxSpeculateEvents = 5000

// maxSpeculateWork bounds the work of all a turn's speculative composes,
// in events composed times (1 + corrections): each correction is applied
// to the whole transcript, so with corrections a compose is no longer
// linear and many tiny batches under maxSpeculateEvents alone could cost
// minutes. The bound is what maxSpeculateEvents allows a turn without
// corrections (one compose per one-event batch).
const maxSpeculateWork = maxSpeculateEvents * maxSpeculateEvents / 2

// speculate recomposes eagerly (pure, cheap) and caches the result keyed
// by the mutation counter. Caller holds mu.
func (p *Processor) speculate() {
	work := len(p.events) * (1 + p.fixes)
	if len(p.events) > maxSpeculateEvents || p.specWork+work > maxSpeculateWork {
		return
	}
	p.specWork += work
	p.cache, p.cacheAt = Compose(p.events, p.cfg.Policy()), p.mutations
	p.ctx.Trace("speculative compose", p.cache)
}

func (p *Processor) blobPath(name string) (string, error) {
	if p.deps.BlobDir == nil {
		return "", errors.New("no blob store configured")
	}
	dir, err := p.deps.BlobDir(p.ctx)
	if err != nil {
		return "", fmt.Errorf("trace blob store: %v", err)
	}
	return filepath.Join(dir, name), nil
}

func (p *Processor) attachment(c *frame.ChunkDescriptor, b []byte) error {
	m := attachmentID.FindStringSubmatch(c.ID)
	if m == nil {
		return fmt.Errorf("attachment id must look like shot_N or seg_N, got %q", c.ID)
	}
	p.mu.Lock()
	_, known := p.blobs[c.ID]
	full := !known && len(p.blobs) >= MaxAttachments
	over := p.blobBytes-p.blobSize[c.ID]+int64(len(b)) > p.deps.maxBlobBytes()
	p.mu.Unlock()
	if full {
		return fmt.Errorf("turn exceeds %d attachments", MaxAttachments)
	}
	if over {
		return fmt.Errorf("turn exceeds %d bytes of attachments and audio", p.deps.maxBlobBytes())
	}
	path, err := p.blobPath(c.ID + "." + ExtForMime(c.Mime))
	if err != nil {
		return err
	}
	if err := writeBlob(path, b); err != nil {
		return fmt.Errorf("saving %s: %v", c.ID, err)
	}
	n, _ := strconv.Atoi(m[2])
	p.mu.Lock()
	p.blobs[c.ID] = path
	p.blobBytes += int64(len(b)) - p.blobSize[c.ID]
	p.blobSize[c.ID] = int64(len(b))
	p.mu.Unlock()
	p.ctx.Trace("attachment", channel.Blob{ID: c.ID, Mime: c.Mime, Path: path, Bytes: int64(len(b))})
	if m[1] == "shot" {
		p.mu.Lock()
		for i := range p.events {
			if p.events[i].Type == TypeShot && p.events[i].Marker == c.ID {
				p.events[i].Path = path
			}
		}
		p.mutations++
		p.mu.Unlock()
		p.condition(c.ID, path, PassDownscale)
		return nil
	}
	p.condition(c.ID, path, PassSilenceTrim)
	if p.cfg.Transcriber == TranscriberOpenAI {
		p.transcribe(n, c.ID+"."+ExtForMime(c.Mime), path)
	}
	return nil
}

// writeBlob stores an attachment by renaming a new file over path, so a
// re-sent id never changes the bytes an upload of the earlier one is
// reading from its open file.
func writeBlob(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".blob-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// condition runs a condition pass on arrival (identity today).
func (p *Processor) condition(id, path, pass string) {
	p.mu.Lock()
	p.passes[id] = pass
	p.mu.Unlock()
	p.ctx.Trace("condition", map[string]any{"id": id, "path": path, "pass": pass, "enabled": p.cfg.PassOn(pass), "identity": true})
}

// conditionedBlob is one attachment as the commit cites it (the trace's
// "conditioned" stage): its file after the pass that ran on its arrival.
type conditionedBlob struct {
	ID      string `json:"id"`
	Path    string `json:"path"`
	Pass    string `json:"pass"`
	Applied bool   `json:"applied"`
}

// conditioned lists the turn's attachments in id order. Caller holds mu.
func (p *Processor) conditioned() []conditionedBlob {
	out := make([]conditionedBlob, 0, len(p.blobs))
	for id, path := range p.blobs {
		pass := p.passes[id]
		out = append(out, conditionedBlob{ID: id, Path: path, Pass: pass, Applied: pass != "" && p.cfg.PassOn(pass)})
	}
	slices.SortFunc(out, func(a, b conditionedBlob) int { return cmpAttachmentID(a.ID, b.ID) })
	return out
}

// cmpAttachmentID orders shot_N before seg_N, then by N.
func cmpAttachmentID(a, b string) int {
	ma, mb := attachmentID.FindStringSubmatch(a), attachmentID.FindStringSubmatch(b)
	if ma == nil || mb == nil || ma[1] != mb[1] {
		return -strings.Compare(a, b) // "shot" > "seg": shots first
	}
	na, _ := strconv.Atoi(ma[2])
	nb, _ := strconv.Atoi(mb[2])
	return na - nb
}

func (p *Processor) audioFrame(c *frame.ChunkDescriptor, b []byte) error {
	m := attachmentID.FindStringSubmatch(c.ID)
	if m == nil || m[1] != "seg" {
		return fmt.Errorf("audio id must look like seg_N, got %q", c.ID)
	}
	if c.Seq == nil || *c.Seq < 0 {
		return errors.New("audio chunk needs a non-negative seq")
	}
	n, _ := strconv.Atoi(m[2])
	p.mu.Lock()
	f := p.audio[n]
	over := p.blobBytes+int64(len(b)) > p.deps.maxBlobBytes()
	p.mu.Unlock()
	if over {
		return fmt.Errorf("turn exceeds %d bytes of attachments and audio", p.deps.maxBlobBytes())
	}
	if f == nil {
		p.mu.Lock()
		full := len(p.audio) >= MaxAudioSegments
		p.mu.Unlock()
		if full {
			return fmt.Errorf("turn exceeds %d streamed audio segments", MaxAudioSegments)
		}
		path, err := p.blobPath(c.ID + "." + ExtForMime(c.Mime))
		if err != nil {
			return err
		}
		if f, err = os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
			return fmt.Errorf("saving %s: %v", c.ID, err)
		}
		p.mu.Lock()
		p.audio[n] = f
		p.blobs[c.ID] = path
		p.mu.Unlock()
		// the file grows with each frame; the viewer reads what is there
		p.ctx.Trace("attachment", channel.Blob{ID: c.ID, Mime: c.Mime, Path: path, Bytes: int64(len(b))})
	}
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("saving %s: %v", c.ID, err)
	}
	p.mu.Lock()
	p.blobBytes += int64(len(b))
	p.blobSize[c.ID] += int64(len(b))
	p.mu.Unlock()
	p.mu.Lock()
	rt := p.rt
	p.mu.Unlock()
	if rt != nil {
		if err := rt.Append(n, b); err != nil {
			p.mu.Lock()
			p.rtErr = err
			p.mu.Unlock()
		}
	}
	return nil
}

func (p *Processor) fin() error {
	p.mu.Lock()
	cancelled := p.cache != nil && p.cache.Cancelled
	p.mu.Unlock()
	defer p.teardown()
	p.ctx.Close()
	if cancelled {
		p.ctx.Trace(channel.StageCancelled, "thread-close reason cancel: nothing sent")
		return nil
	}
	p.waitSeams()
	p.mu.Lock()
	if p.cache == nil || p.cacheAt != p.mutations {
		p.cache, p.cacheAt = Compose(p.events, p.cfg.Policy()), p.mutations
		p.ctx.Trace("composed intent", p.cache)
	} else {
		p.ctx.Trace("composed intent", "speculative compose reused")
	}
	c, sel := p.cache, p.selection
	p.done = true
	cond := p.conditioned()
	p.mu.Unlock()
	if c.Cancelled {
		p.ctx.Trace(channel.StageCancelled, "thread-close reason cancel: nothing sent")
		return nil
	}
	p.ctx.Trace("conditioned", cond)
	pr, ok := Lower(c, channel.Preamble(p.ctx.Hello, sel))
	if !ok {
		p.ctx.Trace("lowered prompt", "empty turn: nothing sent")
		return nil
	}
	meta := channel.MetaAttributes(p.ctx.Hello)
	for k, v := range pr.Meta {
		meta[k] = v
	}
	out := channel.Prompt{Text: pr.Content, Meta: meta}
	if p.ctx.Hello != nil && p.ctx.Hello.Source != nil {
		out.Root = p.ctx.Hello.Source.Root
	}
	p.ctx.Trace("lowered prompt", out)
	return p.ctx.SendPrompt(out)
}

func (p *Processor) waitSeams() {
	wait := p.deps.FinWait
	if wait <= 0 {
		wait = 10 * time.Second
	}
	if !p.drain(wait) {
		p.ctx.Trace("seams", fmt.Sprintf("in-flight transcription/correction still running after %s; composing without it", wait))
	}
}

// OnAbandon drops the per-thread state when the socket closes before fin.
func (p *Processor) OnAbandon() {
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
	p.teardown()
}

func (p *Processor) teardown() {
	p.seamCancel()
	p.mu.Lock()
	for n, f := range p.audio {
		f.Close()
		delete(p.audio, n)
	}
	rt := p.rt
	p.rt = nil
	p.mu.Unlock()
	if rt != nil {
		// outside mu: closing delivers the finals of cut-off segments
		rt.Close()
	}
	// The seams are cancelled; wait (bounded) for their goroutines to
	// finish, so nothing of this thread runs after its socket's close path.
	p.drain(seamDrainWait)
}

// seamDrainWait bounds how long teardown waits for cancelled seams.
const seamDrainWait = 2 * time.Second

// drain waits up to d for every in-flight seam; it reports whether they
// all finished.
func (p *Processor) drain(d time.Duration) bool {
	done := make(chan struct{})
	p.deps.Guard.Go("intent drain", func() { p.inflight.Wait(); close(done) })
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// pushLowered merges a server-produced event into the log and pushes it to
// the client as { kind: "lowered" }. It never runs after fin or abandon.
func (p *Processor) pushLowered(e Event, replace int) {
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return
	}
	if replace >= 0 && replace < len(p.events) {
		p.events[replace] = e
	} else {
		p.events = append(p.events, e)
	}
	k, _ := json.Marshal(e)
	p.pushed[string(k)] = true
	p.mutations++
	p.speculate()
	p.mu.Unlock()
	p.ctx.Trace("merged events", e)
	p.ctx.Push(map[string]any{"kind": "lowered", "threadId": p.ctx.ThreadID, "events": []Event{e}})
}

func nowMS() float64 { return float64(time.Now().UnixNano()) / 1e6 }

func (p *Processor) transcribeModel() string {
	if p.cfg.Model != "" {
		return p.cfg.Model
	}
	return p.deps.TranscribeModel
}

// transcribe runs the REST transcription of one segment in the background,
// uploading it from the file stored on arrival (not from a copy in memory:
// a slow upstream would hold every segment of a turn twice over); a
// keyless or failing call degrades loudly to an empty final with a note.
func (p *Processor) transcribe(seg int, filename, path string) {
	model := p.transcribeModel()
	p.inflight.Add(1)
	p.deps.Guard.Go("intent transcription", func() {
		defer p.inflight.Done()
		start := time.Now()
		var text string
		err := errors.New("no transcription client configured")
		if p.oa != nil {
			text, err = p.upload(model, filename, path)
		}
		e := Event{At: nowMS(), Type: TypeTranscriptFinal, Segment: seg, Text: StrPtr(text), Model: model,
			LatencyMS: float64(time.Since(start).Microseconds()) / 1000}
		if err != nil {
			e.Text = StrPtr("")
			e.Note = "transcription failed: " + err.Error()
			p.ctx.Log.Warn("intent-v1 transcription degraded", "segment", seg, "cause", err)
		}
		p.pushLowered(e, -1)
	})
}

// upload transcribes the segment stored at path.
func (p *Processor) upload(model, filename, path string) (string, error) {
	if p.oa.Key == "" {
		return p.oa.Transcribe(p.seamCtx, model, filename, nil, 0) // the keyless note
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("reading the stored segment: %v", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("reading the stored segment: %v", err)
	}
	return p.oa.Transcribe(p.seamCtx, model, filename, f, st.Size())
}

// correct runs the server-side correction diff for the request at index i.
func (p *Processor) correct(i int) {
	p.mu.Lock()
	req := p.events[i]
	doc := Compose(p.events[:i], p.cfg.Policy()).Transcript()
	p.mu.Unlock()
	model := p.cfg.CorrectionModel
	if model == "" {
		model = p.deps.CorrectionModel
	}
	p.inflight.Add(1)
	p.deps.Guard.Go("intent correction", func() {
		defer p.inflight.Done()
		start := time.Now()
		done := req
		done.Model = model
		var patch string
		err := errors.New("no correction client configured")
		if p.oa != nil {
			patch, err = p.oa.Correct(p.seamCtx, model, doc, req.Original, req.Instruction)
		}
		if err == nil {
			if _, aerr := ApplyPatch(doc, patch); aerr != nil {
				err = fmt.Errorf("diff does not apply: %v", aerr)
			}
		}
		done.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
		if err != nil {
			done.Note = "correction diff failed: " + err.Error()
			p.ctx.Log.Warn("intent-v1 correction diff degraded; client falls back to plain replacement", "cause", err)
		} else {
			done.Patch = patch
		}
		p.pushLowered(done, i)
	})
}

func (p *Processor) realtimeModel() string {
	if p.cfg.RealtimeModel != "" {
		return p.cfg.RealtimeModel
	}
	return p.deps.RealtimeModel
}

func (p *Processor) openRealtime() {
	model := p.realtimeModel()
	switch {
	case p.oa == nil || p.oa.Key == "":
		p.rtErr = fmt.Errorf("realtime transcription unavailable: %v", (&OpenAI{KeyEnv: p.keyEnv()}).noKey())
	case p.deps.Realtime == nil:
		p.rtErr = errors.New("realtime transcription unavailable: this channel has no realtime upstream")
	default:
		rt, err := p.deps.Realtime(p.seamCtx, p.oa.Key, model, p.cfg.RealtimeDelay, RealtimeEvents{
			Delta: func(seg int, text string) {
				p.ctx.Push(map[string]any{"kind": "lowered", "threadId": p.ctx.ThreadID,
					"events": []Event{{At: nowMS(), Type: TypeTranscriptDelta, Segment: seg, Text: StrPtr(text)}}})
			},
			Final: func(seg int, text string, err error) {
				e := Event{At: nowMS(), Type: TypeTranscriptFinal, Segment: seg, Text: StrPtr(text), Model: model}
				if err != nil {
					e.Text, e.Note = StrPtr(""), "realtime transcription failed: "+err.Error()
				}
				p.pushLowered(e, -1)
				p.inflight.Done()
			},
		})
		if err != nil {
			p.rtErr = fmt.Errorf("realtime transcription unavailable: %v", err)
		}
		p.rt = rt
	}
	if p.rtErr != nil {
		p.ctx.Log.Warn("intent-v1 realtime transcription degraded", "cause", p.rtErr)
	}
}

func (p *Processor) keyEnv() string {
	if p.oa != nil && p.oa.KeyEnv != "" {
		return p.oa.KeyEnv
	}
	return "OPENAI_API_KEY"
}

// commitRealtime commits a segment upstream, or degrades loudly, with an
// event shaped as REST's degraded one (the model it would have used, the
// time the attempt took).
func (p *Processor) commitRealtime(seg int) {
	start := time.Now()
	p.mu.Lock()
	rt, rtErr := p.rt, p.rtErr
	path := p.blobs[fmt.Sprintf("seg_%d", seg)]
	p.mu.Unlock()
	p.condition(fmt.Sprintf("seg_%d", seg), path, PassSilenceTrim)
	if rt != nil && rtErr == nil {
		p.inflight.Add(1)
		if err := rt.Commit(seg); err == nil {
			return
		} else {
			p.inflight.Done()
			rtErr = err
		}
	}
	p.pushLowered(Event{At: nowMS(), Type: TypeTranscriptFinal, Segment: seg, Text: StrPtr(""), Model: p.realtimeModel(),
		LatencyMS: float64(time.Since(start).Microseconds()) / 1000, Note: rtErr.Error()}, -1)
}
