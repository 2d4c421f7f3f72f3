package geturl

import "testing"

// AGENTS counts the agents active recently, not the sessions that exist:
// an enabled session nobody has used is a session, not an agent. PAGE
// follows agent traffic (the URL reader is the client geturl serves).
func TestStatusAgentsAreActiveSessions(t *testing.T) {
	b := startBridge(t, nil)
	b.project(t, t.TempDir(), "p", false)
	s := b.newSession(t, "p")
	b.newSession(t, "p")
	st := b.s.Status()
	if st.Sessions != 2 || st.AgentSessions != 0 || st.PageAttached {
		t.Fatalf("before any traffic: %+v, want 2 sessions, no agent, no page", st)
	}
	if code, body := get(t, s.InitURL); code != 200 {
		t.Fatalf("init: %d %s", code, body)
	}
	st = b.s.Status()
	if st.Sessions != 2 || st.AgentSessions != 1 || !st.PageAttached {
		t.Fatalf("after one agent's request: %+v, want 2 sessions, 1 agent, a page", st)
	}
}
