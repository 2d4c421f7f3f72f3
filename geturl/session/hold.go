package session

import "context"

// LiveCount is the number of live sessions: enabled, with their project
// root present, so their URLs answer.
func (m *Manager) LiveCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.live)
}

// HoldWhileLive keeps a hold, taken with hold and ended with the release
// it returns, for as long as any session is live, until ctx is done (then
// a hold still taken is released). The adapter passes its activity
// reporter's AgentAttached: the hub's idle rules never end a hub while a
// session's URLs could still be used, by an agent that reads them hours
// apart.
func (m *Manager) HoldWhileLive(ctx context.Context, hold func() (release func())) {
	var release func()
	defer func() {
		if release != nil {
			release()
		}
	}()
	for {
		m.mu.Lock()
		live, changed := len(m.live) > 0, m.changedLocked()
		m.mu.Unlock()
		switch {
		case live && release == nil:
			release = hold()
		case !live && release != nil:
			release()
			release = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// changedLocked is closed at the next change of the live set.
func (m *Manager) changedLocked() <-chan struct{} {
	if m.changed == nil {
		m.changed = make(chan struct{})
	}
	return m.changed
}

// liveChangedLocked wakes every HoldWhileLive.
func (m *Manager) liveChangedLocked() {
	if m.changed != nil {
		close(m.changed)
		m.changed = nil
	}
}
