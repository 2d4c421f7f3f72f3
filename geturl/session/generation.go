package session

import (
	"context"
	"time"

	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/engine/replay"
	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/mutation"
	"github.com/hubdev/hub/geturl/route"
)

// Generation is one live session generation: three capability tokens and
// the state that lives and dies with them (response replay, read
// coverage, and the mutation state: intent journal, staged blobs,
// serial-edit tracker). Rotating a session replaces its generation, so
// everything an old URL could reach disappears at once. A generation
// outlives an adapter restart (the Manager does), so a journaled URL
// fetched again after one still runs once.
type Generation struct {
	id      string // the session's
	project string
	scope   *sandbox.Scope
	perms   route.Permissions
	tokens  map[route.Capability]string
	replay  *replay.Store
	ledger  *files.Ledger
	mut     *mutation.State
	born    time.Time
}

var (
	_ route.LiveSession = (*Generation)(nil)
	_ mutation.Session  = (*Generation)(nil)
)

// newGeneration mints a generation for d, with the Init and read tokens
// of kept when it holds a previous process's (a restart), else new ones.
// The mutation token is always new (see TokensFileName).
func newGeneration(d Definition, p Project, scope *sandbox.Scope, now func() time.Time, kept *keptTokens) *Generation {
	g := &Generation{
		id: d.ID, project: p.Name, scope: scope,
		perms:  p.permissions(),
		tokens: map[route.Capability]string{route.CapInit: newToken(), route.CapRead: newToken()},
		replay: replay.New(now),
		ledger: &files.Ledger{},
		born:   now(),
	}
	if kept != nil && kept.valid() {
		g.tokens[route.CapInit], g.tokens[route.CapRead], g.born = kept.Init, kept.Read, kept.Born
	}
	g.mut = mutation.NewState(g.ledger, now)
	if g.perms.Mutations() {
		for {
			t := newToken()
			if t != g.tokens[route.CapInit] && t != g.tokens[route.CapRead] {
				g.tokens[route.CapMutation] = t
				break
			}
		}
	}
	return g
}

// Scope implements route.Session.
func (g *Generation) Scope() *sandbox.Scope { return g.scope }

// Permissions implements route.Session.
func (g *Generation) Permissions() route.Permissions { return g.perms }

// Replay implements route.Session.
func (g *Generation) Replay() *replay.Store { return g.replay }

// Coverage implements route.Session.
func (g *Generation) Coverage() route.Coverage { return g.ledger }

// Mutations implements mutation.Session: the generation's journal,
// staging store and edit tracker (also for read-only generations, which
// cannot reach them: they have no mutation base).
func (g *Generation) Mutations() *mutation.State { return g.mut }

// end releases what outlives a request: the generation's background
// terminal processes, whose only handles were its URLs.
func (g *Generation) end() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g.mut.Close(ctx)
}

// Project implements route.LiveSession.
func (g *Generation) Project() string { return g.project }

// Token implements route.LiveSession.
func (g *Generation) Token(k route.Capability) string { return g.tokens[k] }

// SessionID is the session this generation belongs to.
func (g *Generation) SessionID() string { return g.id }
