package hub

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrIdle is returned (wrapped in an *IdleError) when an idle rule ends a
// process or adapter. It is a clean exit, not a crash.
var ErrIdle = errors.New("idle exit")

// IdleError says which idle rule fired.
type IdleError struct{ Reason string }

func (e *IdleError) Error() string { return "idle exit: " + e.Reason }
func (e *IdleError) Unwrap() error { return ErrIdle }

// IdleRules are the two ways an unused bridge goes away. Zero disables a rule.
type IdleRules struct {
	// NoPageWithin: exit if no page has ever attached this long after start.
	NoPageWithin time.Duration
	// AgentIdle: exit after this long without any agent activity (control
	// plane request, MCP message, shell command), even with a page attached.
	AgentIdle time.Duration
}

// Activity is what the lifecycle knows about one adapter.
type Activity struct {
	PageEverAttached bool      `json:"pageEverAttached"`
	LastPage         time.Time `json:"lastPage,omitzero"`
	LastAgent        time.Time `json:"lastAgent,omitzero"`
}

// Lifecycle records page attachments and agent activity and owns the idle
// rules. An MCP client that sent initialize owns the process (Own), which
// switches both rules off: that client will end the process itself.
type Lifecycle struct {
	rules   IdleRules
	started time.Time

	mu        sync.Mutex
	pageEver  bool
	lastAgent time.Time
	owned     bool
	attached  int // agents holding the process alive (AgentAttached)
	per       map[string]*Activity
	// changed wakes Wait. Only an agent's leaving needs to: it can give
	// back a deadline an attached agent took away. Everything else (a page,
	// activity, an attach, an owner) only moves the deadline later or takes
	// it away, and Wait looks again when its deadline comes.
	changed chan struct{}
	// untimed: Wait last found no rule that can fire yet (an owner, an
	// attached agent), so only changed wakes it. Without rules nothing can
	// fire, and it stays false.
	untimed bool
}

// NewLifecycle starts the clock for rules now.
func NewLifecycle(rules IdleRules) *Lifecycle {
	now := time.Now()
	return &Lifecycle{rules: rules, started: now, lastAgent: now, per: map[string]*Activity{}, changed: make(chan struct{}, 1)}
}

func (l *Lifecycle) activity(name string) *Activity {
	a := l.per[name]
	if a == nil {
		a = &Activity{}
		l.per[name] = a
	}
	return a
}

// PageAttached records that a page authenticated on adapter name. Callers
// call it on every request.
func (l *Lifecycle) PageAttached(name string) {
	l.mu.Lock()
	now := time.Now()
	a := l.activity(name)
	a.PageEverAttached, a.LastPage = true, now
	l.pageEver = true
	l.mu.Unlock()
}

// AgentActivity records that an agent used adapter name.
func (l *Lifecycle) AgentActivity(name string) {
	l.mu.Lock()
	now := time.Now()
	l.activity(name).LastAgent = now
	l.lastAgent = now
	l.mu.Unlock()
}

// Own marks the process as owned by an MCP client: idle rules stop applying.
func (l *Lifecycle) Own() {
	l.mu.Lock()
	l.owned = true
	l.mu.Unlock()
}

// AgentAttached records that an agent attached to adapter name for as
// long as it stays (a face holding an event stream open): no idle rule
// fires while any agent is attached, as none does while an MCP client owns
// the process. The returned detach, called once when the agent leaves,
// counts as its last activity, so the idle clock restarts from there.
func (l *Lifecycle) AgentAttached(name string) (detach func()) {
	l.mu.Lock()
	now := time.Now()
	l.attached++
	l.activity(name).LastAgent = now
	l.lastAgent = now
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			now := time.Now()
			l.attached--
			l.activity(name).LastAgent = now
			l.lastAgent = now
			wake := l.untimed
			l.mu.Unlock()
			if wake {
				select {
				case l.changed <- struct{}{}:
				default:
				}
			}
		})
	}
}

// Activity returns a copy of what is known about adapter name.
func (l *Lifecycle) Activity(name string) Activity {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a := l.per[name]; a != nil {
		return *a
	}
	return Activity{}
}

// next returns the time the next rule would fire and why, or ok=false when
// no rule can fire any more.
func (l *Lifecycle) next() (at time.Time, reason string, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	defer func() { l.untimed = !ok && l.rules != IdleRules{} }()
	if l.owned || l.attached > 0 {
		return time.Time{}, "", false
	}
	if l.rules.NoPageWithin > 0 && !l.pageEver {
		at, reason, ok = l.started.Add(l.rules.NoPageWithin),
			fmt.Sprintf("no page attached within %s of start", l.rules.NoPageWithin), true
	}
	if l.rules.AgentIdle > 0 {
		t := l.lastAgent.Add(l.rules.AgentIdle)
		if !ok || t.Before(at) {
			at, reason, ok = t, fmt.Sprintf("no agent activity for %s", l.rules.AgentIdle), true
		}
	}
	return at, reason, ok
}

// Wait blocks until an idle rule fires, returning an *IdleError, or until
// ctx is done, returning ctx.Err(). One Wait at a time: a change wakes one.
func (l *Lifecycle) Wait(ctx context.Context) error {
	for {
		at, reason, ok := l.next()
		var fire <-chan time.Time
		var t *time.Timer
		if ok {
			d := time.Until(at)
			if d <= 0 {
				return &IdleError{Reason: reason}
			}
			t = time.NewTimer(d)
			fire = t.C
		}
		select {
		case <-ctx.Done():
		case <-l.changed:
		case <-fire:
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// ActivityReporter records one adapter's activity in a Lifecycle. Its zero
// value records nothing (an adapter built outside any lifecycle).
type ActivityReporter struct {
	l    *Lifecycle
	name string
}

// Reporter returns the reporter for adapter name.
func (l *Lifecycle) Reporter(name string) ActivityReporter {
	return ActivityReporter{l: l, name: name}
}

// PageAttached records that a page authenticated.
func (r ActivityReporter) PageAttached() {
	if r.l != nil {
		r.l.PageAttached(r.name)
	}
}

// AgentActivity records that an agent used the adapter.
func (r ActivityReporter) AgentActivity() {
	if r.l != nil {
		r.l.AgentActivity(r.name)
	}
}

// AgentAttached records an agent attached until the returned detach runs.
func (r ActivityReporter) AgentAttached() (detach func()) {
	if r.l == nil {
		return func() {}
	}
	return r.l.AgentAttached(r.name)
}

// Following holds off the idle rules while the adapter follows a bridge
// started outside the hub (on its port, or in its state directory): pages
// and agents use that bridge, never this adapter, yet the hub must still
// be there to take over when it stops. It counts as a page attached, and
// release, when following ends, as the agent's last activity.
func (r ActivityReporter) Following() (release func()) {
	r.PageAttached()
	return r.AgentAttached()
}
