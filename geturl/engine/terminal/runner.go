package terminal

import "github.com/hubdev/hub/geturl/engine/sandbox"

// Runner is the terminal of one session: it runs commands in its project.
// It is safe for concurrent use.
type Runner struct {
	m     *Manager
	scope *sandbox.Scope

	// Guarded by m.mu: this session's background processes, and their
	// count including launches not yet registered.
	bg      map[*background]struct{}
	bgCount int
}
