package filechange

import (
	"context"
	"strings"

	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/fault"
)

// Engine performs one session generation's file mutations. Build one per
// session generation (the scope and ledger are the session's, the Gate is
// the process's); it is safe for concurrent use, and concurrent calls on
// one project run one at a time.
type Engine struct {
	// Scope is the project the session may change.
	Scope *sandbox.Scope
	// Ledger is the session's read coverage (what /r returned). Write
	// consults it before replacing an existing file; every mutation
	// invalidates the coverage of the files it touched. nil: no coverage,
	// so Write can create files but never replace one.
	Ledger *files.Ledger
	// Gate serialises mutations per project root across sessions; share
	// one per process. nil: a package-wide gate.
	Gate *Gate
	// Logs signs the crash logs of multi-file patches and checks the one
	// a crash left before it is followed; share one per process. nil: a
	// key made for this process, so a log is recovered only by it.
	Logs *LogKey
	// Edits watches for serial /e loops (nil: no hint).
	Edits *EditTracker
	// Allow is what the session may change beyond the project's own
	// files (sandbox.Allow). The zero value refuses configuration that
	// tools run on their own; set Autorun only for a session that may run
	// commands anyway (one with the terminal). Version-control metadata
	// is refused whatever it says.
	Allow sandbox.Allow
	// Limits bound the engine; zero fields take DefaultLimits.
	Limits Limits

	// hook, set by tests, runs before each file-system step (see fsys).
	hook func(op, rel string) error
}

// begin takes the project's slot in the gate and opens the project root.
// The returned function undoes both.
func (e *Engine) begin(ctx context.Context) (*fsys, func(), *fault.Error) {
	g := e.Gate
	if g == nil {
		g = &sharedGate
	}
	unlock, err := g.Lock(ctx, e.Scope.Root())
	if err != nil {
		return nil, nil, refusal(CodeProjectBusy, "another mutation of this project is still running", "retry the same URL", fault.ActionRetryLater, true)
	}
	f, err := openFS(e.Scope, e.Logs, e.hook)
	if err != nil {
		unlock()
		return nil, nil, refusal(CodeWriteFailed, "the project root cannot be opened", "", fault.ActionRetryLater, true)
	}
	// A patch a crash cut short is rolled back before anything reads or
	// changes the project again (Recover does it when geturl starts).
	if _, err := f.recoverLog(); err != nil {
		f.close()
		unlock()
		return nil, nil, refusal(CodeRollbackIncomplete, "a patch interrupted by a crash could not be rolled back: "+err.Error(),
			"ask the operator to inspect the project ("+txnLogName+" lists the interrupted steps)", "", false)
	}
	return f, func() { f.close(); unlock() }, nil
}

// invalidate forgets the session's read coverage of changed files.
func (e *Engine) invalidate(hosts ...string) {
	if e.Ledger == nil {
		return
	}
	for _, h := range hosts {
		e.Ledger.Invalidate(h)
	}
}

// target is an agent path resolved for a mutation.
type target struct {
	virtual string // what the agent sees
	host    string // canonical host path: the ledger key
	rel     string // host relative to the root, for fsys
	exists  bool
}

// resolve approves p for a mutation: every symlink on the way, the final
// component included, is followed and must stay inside the scope (a
// dangling link is followed to where a create would land), and neither
// the path as named nor where it leads may be version-control metadata,
// or, unless e.Allow.Autorun, configuration that tools run on their own
// (sandbox.ResolveMutable). A path ending in "/" names a directory and is
// refused. Every path a mutation changes passes here: /w's and /e's,
// and each of a patch's Add, Update, Delete and Move to paths, before the
// patch changes anything.
func (e *Engine) resolve(p string) (target, *fault.Error) {
	if strings.HasSuffix(p, "/") && len(p) > 1 {
		return target{}, refusal("invalid_path", "a path ending in / names a directory: "+e.Scope.Display(p), "name the file", fault.ActionCorrectRequest, true).With("path", e.Scope.Display(p))
	}
	r, err := e.Scope.ResolveMutable(p, e.Allow)
	if err != nil {
		return target{}, pathFailure(e.Scope.Display(p), err)
	}
	rel, ok := e.Scope.Rel(r.Host)
	if !ok { // ResolveNew guarantees containment; never act on anything else
		return target{}, pathFailure(e.Scope.Display(p), &sandbox.Error{Kind: sandbox.ErrOutsideScope, Code: "path_outside_scope"})
	}
	return target{virtual: r.Virtual, host: r.Host, rel: rel, exists: r.Exists}, nil
}

// namedSymlink reports whether the final component of p, as named, is a
// symlink (Delete and a move's source act on regular files only, never on
// a link or through it).
func (e *Engine) namedSymlink(p string) bool {
	r, err := e.Scope.ResolveLink(p)
	return err == nil && r.Symlink
}
