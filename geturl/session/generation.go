package session

import (
	"context"
	"log/slog"
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
// outlives an adapter restart (the Manager does), and its tokens and
// journal outlive a process restart (tokens.json and its journal file), so
// a journaled URL fetched again after either still runs once.
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
	// journalID names the durable journal's file ("" when the journal is
	// in memory only).
	journalID string
}

var (
	_ route.LiveSession = (*Generation)(nil)
	_ mutation.Session  = (*Generation)(nil)
)

// newGeneration mints a generation for d, with the Init and read tokens
// of kept when it holds a previous process's (a restart), else new ones.
// The mutation token and its journal are kept's too when its journal file
// in journals loads, else new (mutationJournal); journals "" keeps the
// journal in memory.
func newGeneration(d Definition, p Project, scope *sandbox.Scope, now func() time.Time, kept *keptTokens, journals string, log *slog.Logger) *Generation {
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
	} else {
		kept = nil
	}
	if !g.perms.Mutations() {
		g.mut = mutation.NewState(g.ledger, now)
		return g
	}
	taken := func(t string) bool { return t == g.tokens[route.CapInit] || t == g.tokens[route.CapRead] }
	tok, jid, j := mutationJournal(journals, d.ID, kept, taken, now, log)
	g.tokens[route.CapMutation], g.journalID = tok, jid
	g.mut = mutation.NewStateWith(g.ledger, now, j)
	return g
}

// retire deletes the generation's journal file: its authority has ended
// (rotation, stop, deletion), and its URLs with it.
func (g *Generation) retire(log *slog.Logger) {
	if err := g.mut.Journal.Remove(); err != nil {
		log.Warn("cannot remove an ended session's intent journal; it is removed at the next start", "session", g.id, "err", err)
	}
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
