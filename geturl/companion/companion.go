package companion

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/session"
)

// Lease bounds: geturl's `companion.lease` (the heartbeat comes every
// third of it).
const (
	DefaultLease = 15 * time.Second
	MinLease     = 2 * time.Second
	MaxLease     = 5 * time.Minute
)

// Pairing bounds, checked before any authentication: at most MaxPending
// requests wait for the operator, each for PairTTL.
const (
	MaxPending = 8
	PairTTL    = 5 * time.Minute
	// maxRequests bounds the requests kept for their devices' polling,
	// answered ones included.
	maxRequests = 64
)

// Options configure a Service.
type Options struct {
	// Path is companion.json.
	Path string
	// Sessions is the session manager companion sessions are made in.
	Sessions *session.Manager
	// Lease is how long a heartbeat keeps a binding's authority (default
	// DefaultLease).
	Lease time.Duration
	// Prompt is the one-time Init prompt for a session's Init token,
	// exactly what `hub geturl session new` prints.
	Prompt func(initToken string) string
	// ControlPort is the control plane's port: the only Host accepted is
	// 127.0.0.1:ControlPort.
	ControlPort int
	// Now is the clock (default time.Now).
	Now func() time.Time
	Log *slog.Logger
}

// Service is the companion: paired devices, pairing requests, bindings
// and their leases.
type Service struct {
	o Options

	mu sync.Mutex
	// broken is set when companion.json could not be trusted: no device
	// is, and the file is left alone for the operator to inspect.
	broken    error
	devices   map[string]*device
	live      map[string]*binding // live bindings by id
	history   []bindingRecord     // ended bindings, oldest first
	requests  map[string]*pairRequest
	gen       int64
	savedSeen time.Time // when last_seen was last written
	seenDirty bool      // a last_seen changed since

	// owned is what the data plane checks, by session id: every session a
	// companion binding owns, until the session is deleted. It has its own
	// lock because mu is held across disk writes and Lookup runs on every
	// data-plane request.
	lmu   sync.RWMutex
	owned map[string]*lease
}

// lease is one companion session's authority at the data plane.
type lease struct {
	g      *session.Generation // the generation bound; any other is refused
	expiry atomic.Int64        // UnixNano
	ended  atomic.Bool
}

// live reports whether the lease lets g through at now.
func (l *lease) live(g *session.Generation, now time.Time) bool {
	return !l.ended.Load() && l.g == g && now.UnixNano() < l.expiry.Load()
}

func (l *lease) until() time.Time { return time.Unix(0, l.expiry.Load()) }

type device struct {
	rec     deviceRecord
	hash    [sha256.Size]byte
	lastSeq int64
}

type binding struct {
	rec   bindingRecord
	gen   int64
	lease *lease
	ended bool
}

type pairRequest struct {
	id, device, name, code string
	hash                   [sha256.Size]byte
	created, expires       time.Time
	state                  string // statePending, stateApproved, stateRefused
}

const (
	statePending  = "pending"
	stateApproved = "approved"
	stateRefused  = "refused"
	stateExpired  = "expired"
)

// Open loads companion.json. A hub that starts again cannot have kept a
// lease: every binding still live in the file ends now, and its session
// is deleted before the data plane serves. An unreadable or unsafe file
// trusts no device; it is logged and left as it is, never fatal.
func Open(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Lease == 0 {
		o.Lease = DefaultLease
	}
	s := &Service{o: o, devices: map[string]*device{}, live: map[string]*binding{},
		requests: map[string]*pairRequest{}, owned: map[string]*lease{}}
	st, err := loadFile(o.Path)
	if err != nil {
		s.broken = err
		o.Log.Error("companion devices not trusted: companion.json is unreadable; fix or remove it and pair again", "file", o.Path, "err", err)
		s.stopUnrecorded()
		return s
	}
	for _, d := range st.Devices {
		h, _ := decodeHex(d.Hash)
		dev := &device{rec: d}
		copy(dev.hash[:], h)
		s.devices[d.ID] = dev
	}
	now := o.Now().UTC()
	changed := false
	for _, b := range st.Bindings {
		if b.Ended.IsZero() {
			b.Ended, changed = now, true
			if err := o.Sessions.Delete(b.Session); err != nil && !isNotFound(err) {
				// Still owned: refused at the gateway until a sweep deletes it.
				l := &lease{}
				l.ended.Store(true)
				s.own(b.Session, l)
				o.Log.Warn("companion session of an earlier run could not be deleted", "session", b.Session, "err", err)
			}
		}
		s.history = append(s.history, b)
	}
	s.trimHistoryLocked()
	if changed {
		s.saveLocked()
	}
	return s
}

// stopUnrecorded stops every enabled session labelled as a companion's
// when companion.json cannot say which sessions bindings own: without
// it, such a session would live on as if made by hand, with no lease.
// Stopped, not deleted: the operator may start a session they labelled so
// themselves again.
func (s *Service) stopUnrecorded() {
	for _, v := range s.o.Sessions.List() {
		if v.Enabled && strings.HasPrefix(v.Label, labelPrefix) {
			if _, err := s.o.Sessions.Stop(v.ID); err != nil {
				s.o.Log.Error("a companion session could not be stopped", "session", v.ID, "err", err)
				continue
			}
			s.o.Log.Warn("companion session stopped: companion.json cannot say whether its lease lives", "session", v.ID)
		}
	}
}

func isNotFound(err error) bool {
	var se *session.Error
	return errors.As(err, &se) && se.Code == session.CodeSessionNotFound
}

func (s *Service) now() time.Time { return s.o.Now() }

// Lease is the configured lease length.
func (s *Service) Lease() time.Duration { return s.o.Lease }

// heartbeatEvery is the interval the extension heartbeats at.
func (s *Service) heartbeatEvery() time.Duration { return s.o.Lease / 3 }

// Lookup implements the data-plane gateway's Sessions over the session
// manager's token table: a generation a companion binding owns is found
// only while the binding is live, its lease unexpired and the generation
// the bound one; otherwise the token is unknown, as an ended session's
// is. Sessions no binding owns pass through untouched.
func (s *Service) Lookup(token string) (route.LiveSession, route.Capability, bool) {
	ls, k, ok := s.o.Sessions.Sessions().Lookup(token)
	if !ok {
		return nil, 0, false
	}
	g, isGen := ls.(*session.Generation)
	if !isGen {
		return ls, k, true
	}
	s.lmu.RLock()
	l := s.owned[g.SessionID()]
	s.lmu.RUnlock()
	if l != nil && !l.live(g, s.now()) {
		return nil, 0, false
	}
	return ls, k, true
}

// own makes sid's data-plane authority subject to l.
func (s *Service) own(sid string, l *lease) {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	s.owned[sid] = l
}

// disown forgets sid once its session is deleted.
func (s *Service) disown(sid string) {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	delete(s.owned, sid)
}

// Run ends expired bindings every third of a lease until ctx is done
// (Lookup already refuses them at their expiry; this frees their
// sessions).
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(max(s.o.Lease/3, 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.Sweep()
		}
	}
}

// Sweep ends every binding whose lease expired or whose session no
// longer has the generation it was bound with (rotated, stopped, deleted,
// its project changed), and forgets answered pairing requests.
func (s *Service) Sweep() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for _, b := range s.live {
		s.checkLocked(b, now)
	}
	var undeleted []string
	s.lmu.RLock()
	for sid, l := range s.owned {
		if l.ended.Load() {
			undeleted = append(undeleted, sid)
		}
	}
	s.lmu.RUnlock()
	for _, sid := range undeleted {
		s.deleteSessionLocked(sid)
	}
	s.pruneRequestsLocked(now)
	if s.seenDirty && now.Sub(s.savedSeen) >= time.Minute {
		s.saveLocked()
	}
}

// checkLocked ends b when its lease expired or its session's generation
// changed; it reports whether b is still live.
func (s *Service) checkLocked(b *binding, now time.Time) bool {
	if b.ended {
		return false
	}
	if !now.Before(b.lease.until()) {
		s.endLocked(b, "lease expired")
		return false
	}
	if g, ok := s.o.Sessions.Live(b.rec.Session); !ok || g != b.lease.g {
		s.endLocked(b, "session rotated or stopped")
		return false
	}
	return true
}

// endLocked ends a binding at once: the gateway refuses its generation
// from now on and its session is deleted; it never comes back.
func (s *Service) endLocked(b *binding, why string) {
	if b.ended {
		return
	}
	b.ended = true
	b.lease.ended.Store(true) // first: the data plane refuses it from now
	b.rec.Ended = s.now().UTC()
	delete(s.live, b.rec.ID)
	s.history = append(s.history, b.rec)
	s.trimHistoryLocked()
	s.deleteSessionLocked(b.rec.Session)
	s.saveLocked()
	s.o.Log.Info("companion binding ended", "binding", b.rec.ID, "device", b.rec.Device, "session", b.rec.Session, "why", why)
}

// deleteSessionLocked deletes an ended binding's session; while that
// fails the session stays owned (and so refused) for the next sweep.
func (s *Service) deleteSessionLocked(sid string) {
	if err := s.o.Sessions.Delete(sid); err != nil && !isNotFound(err) {
		s.o.Log.Warn("companion session could not be deleted; its URLs stay refused", "session", sid, "err", err)
		return
	}
	s.disown(sid)
}

func (s *Service) trimHistoryLocked() {
	var ended []bindingRecord
	for _, b := range s.history {
		if !b.Ended.IsZero() {
			ended = append(ended, b)
		}
	}
	if len(ended) > keepEnded {
		ended = ended[len(ended)-keepEnded:]
	}
	s.history = ended
}

// saveLocked writes companion.json; a failure is logged (the in-memory
// state stays authoritative for this run).
func (s *Service) saveLocked() error {
	if s.broken != nil {
		return s.broken
	}
	st := fileState{Version: 1, Devices: []deviceRecord{}, Bindings: slices.Clone(s.history)}
	for _, d := range s.devices {
		st.Devices = append(st.Devices, d.rec)
	}
	slices.SortFunc(st.Devices, func(a, b deviceRecord) int { return a.Paired.Compare(b.Paired) })
	for _, b := range s.live {
		st.Bindings = append(st.Bindings, b.rec)
	}
	if st.Bindings == nil {
		st.Bindings = []bindingRecord{}
	}
	if err := st.save(s.o.Path); err != nil {
		s.o.Log.Error("companion.json could not be written", "file", s.o.Path, "err", err)
		return err
	}
	s.savedSeen, s.seenDirty = s.now(), false
	return nil
}

// newID is a random id with a one-letter kind prefix.
func newID(kind byte) string {
	var b [8]byte
	rand.Read(b[:])
	return string(kind) + hex.EncodeToString(b[:])
}

// validID checks the shape newID makes.
func validID(id string, kind byte) bool {
	if len(id) != 17 || id[0] != kind {
		return false
	}
	_, err := hex.DecodeString(id[1:])
	return err == nil && id == strings.ToLower(id)
}

func decodeHex(s string) ([]byte, error) {
	if s != strings.ToLower(s) {
		return nil, errors.New("not lower-case hex")
	}
	return hex.DecodeString(s)
}

// codeAlphabet is the pairing code's: A-Z and 2-9, 34 symbols.
const codeAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ23456789"

// newCode is a uniform random 6-symbol pairing code.
func newCode() string {
	out := make([]byte, 6)
	for i := range out {
		for {
			var b [1]byte
			rand.Read(b[:])
			if int(b[0]) < 256-256%len(codeAlphabet) {
				out[i] = codeAlphabet[int(b[0])%len(codeAlphabet)]
				break
			}
		}
	}
	return string(out)
}

// Error is a refusal with an HTTP status and a stable code; the control
// plane answers the operator API's refusals with them.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string     { return e.Message }
func (e *Error) HTTPStatus() int   { return e.Status }
func (e *Error) ErrorCode() string { return e.Code }

func errorf(status int, code, format string, a ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, a...)}
}
