package control

import (
	"testing"
	"time"
)

// Lifetimes and bounds, on an injected clock: a login token works once
// and for two minutes; a session for twelve hours from its login; at most
// maxUISession sessions and maxLogins unspent tokens live, the oldest go
// first.
func TestUIAuthLifetimes(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := newUIAuth(func() time.Time { return now })

	tok := a.newLogin()
	now = now.Add(loginTTL)
	if _, ok := a.redeem(tok); ok {
		t.Fatal("a login token redeemed at its expiry")
	}
	now = now.Add(-time.Second)
	tok = a.newLogin()
	now = now.Add(loginTTL - time.Second)
	sess, ok := a.redeem(tok)
	if !ok || !a.valid(sess) {
		t.Fatal("a login token did not redeem within its lifetime")
	}
	if _, ok := a.redeem(tok); ok {
		t.Fatal("a login token redeemed twice")
	}
	if _, ok := a.redeem(""); ok {
		t.Fatal("the empty token redeemed")
	}
	now = now.Add(SessionTTL - time.Second)
	if !a.valid(sess) {
		t.Fatal("a session ended before its lifetime")
	}
	now = now.Add(time.Second)
	if a.valid(sess) {
		t.Fatal("a session outlived its lifetime")
	}

	var sessions []string
	for range maxUISession + 1 {
		now = now.Add(time.Second)
		s, ok := a.redeem(a.newLogin())
		if !ok {
			t.Fatal("redeem")
		}
		sessions = append(sessions, s)
	}
	if a.valid(sessions[0]) || !a.valid(sessions[1]) || !a.valid(sessions[maxUISession]) || len(a.sessions) != maxUISession {
		t.Fatalf("after %d logins: oldest %v, next %v, newest %v, %d kept", maxUISession+1,
			a.valid(sessions[0]), a.valid(sessions[1]), a.valid(sessions[maxUISession]), len(a.sessions))
	}

	var logins []string
	for range maxLogins + 1 {
		now = now.Add(time.Millisecond)
		logins = append(logins, a.newLogin())
	}
	if len(a.logins) != maxLogins {
		t.Fatalf("%d unspent logins kept, want %d", len(a.logins), maxLogins)
	}
	if _, ok := a.redeem(logins[0]); ok {
		t.Fatal("the oldest unspent login survived the bound")
	}
	if _, ok := a.redeem(logins[maxLogins]); !ok {
		t.Fatal("the newest login was dropped")
	}

	a.logout(sessions[maxUISession])
	if a.valid(sessions[maxUISession]) {
		t.Fatal("a session survived its logout")
	}
}
