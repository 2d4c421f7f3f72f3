package hub

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// waitResult runs l.Wait in the background and returns its channel.
func waitResult(ctx context.Context, l *Lifecycle) <-chan error {
	c := make(chan error, 1)
	go func() { c <- l.Wait(ctx) }()
	return c
}

func TestLifecycleNoPage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLifecycle(IdleRules{NoPageWithin: 30 * time.Minute})
		start := time.Now()
		err := <-waitResult(t.Context(), l)
		var idle *IdleError
		if !errors.As(err, &idle) || !errors.Is(err, ErrIdle) {
			t.Fatalf("err = %v, want IdleError", err)
		}
		if d := time.Since(start); d != 30*time.Minute {
			t.Fatalf("fired after %v, want 30m", d)
		}
		if !strings.Contains(idle.Reason, "no page attached") {
			t.Fatalf("reason %q", idle.Reason)
		}
	})
}

func TestLifecyclePageCancelsNoPageRule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLifecycle(IdleRules{NoPageWithin: 30 * time.Minute})
		ctx, cancel := context.WithCancel(t.Context())
		res := waitResult(ctx, l)
		time.Sleep(10 * time.Minute)
		l.PageAttached("stitchslop")
		time.Sleep(10 * time.Hour)
		synctest.Wait()
		select {
		case err := <-res:
			t.Fatalf("exited after a page attached: %v", err)
		default:
		}
		cancel()
		if err := <-res; !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		if a := l.Activity("stitchslop"); !a.PageEverAttached || a.LastPage.IsZero() {
			t.Fatalf("activity not recorded: %+v", a)
		}
	})
}

func TestLifecycleAgentIdleEvenWithPage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLifecycle(IdleRules{NoPageWithin: 30 * time.Minute, AgentIdle: 2 * time.Hour})
		start := time.Now()
		res := waitResult(t.Context(), l)
		l.PageAttached("aiui")
		time.Sleep(90 * time.Minute)
		l.AgentActivity("aiui") // pushes the agent rule to 3h30m
		err := <-res
		if d := time.Since(start); d != 210*time.Minute {
			t.Fatalf("fired after %v, want 3h30m", d)
		}
		if !strings.Contains(err.Error(), "no agent activity") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestLifecycleOwnedNeverIdles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLifecycle(IdleRules{NoPageWithin: time.Minute, AgentIdle: time.Minute})
		ctx, cancel := context.WithCancel(t.Context())
		res := waitResult(ctx, l)
		time.Sleep(30 * time.Second)
		l.Own()
		time.Sleep(24 * time.Hour)
		synctest.Wait()
		select {
		case err := <-res:
			t.Fatalf("owned process idled: %v", err)
		default:
		}
		cancel()
		<-res
	})
}

func TestLifecycleDisabledRules(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLifecycle(IdleRules{})
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Hour)
		defer cancel()
		if err := l.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the context's deadline", err)
		}
	})
}

// An attached agent (a face holding an event stream) keeps every rule from
// firing while it stays; when it leaves, the agent rule counts from then.
func TestLifecycleAttachedAgentHolds(t *testing.T) {
	cases := []struct {
		name   string
		rules  IdleRules
		stay   time.Duration // how long the agent stays attached
		faces  int           // attached at once; all leave together
		reason string
		after  time.Duration // when the rule fires, from start
	}{
		{"no page rule held", IdleRules{NoPageWithin: 30 * time.Minute}, 5 * time.Hour, 1, "no page attached", 5 * time.Hour},
		{"agent rule restarts at detach", IdleRules{AgentIdle: 2 * time.Hour}, 5 * time.Hour, 1, "no agent activity", 7 * time.Hour},
		{"two faces", IdleRules{NoPageWithin: time.Minute, AgentIdle: time.Hour}, 3 * time.Hour, 2, "", 3 * time.Hour},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := NewLifecycle(tc.rules)
				start := time.Now()
				var detach []func()
				for range tc.faces {
					detach = append(detach, l.AgentAttached("stitchslop"))
				}
				res := waitResult(t.Context(), l)
				time.Sleep(tc.stay)
				synctest.Wait()
				select {
				case err := <-res:
					t.Fatalf("idled while attached: %v", err)
				default:
				}
				for _, d := range detach {
					d()
					d() // idempotent
				}
				err := <-res
				if d := time.Since(start); d != tc.after {
					t.Fatalf("fired after %v, want %v", d, tc.after)
				}
				if !strings.Contains(err.Error(), tc.reason) {
					t.Fatalf("err = %v, want %q", err, tc.reason)
				}
				if a := l.Activity("stitchslop"); !a.LastAgent.Equal(start.Add(tc.stay)) {
					t.Fatalf("last agent activity %v, want the detach", a.LastAgent)
				}
			})
		})
	}
}

// An adapter following a bridge started outside the hub holds both rules
// off for as long as it follows (its pages and agents are that bridge's),
// and after the takeover only the agent rule runs, from the release.
func TestLifecycleFollowingHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLifecycle(IdleRules{NoPageWithin: 30 * time.Minute, AgentIdle: 2 * time.Hour})
		start := time.Now()
		release := l.Reporter("aiui").Following()
		res := waitResult(t.Context(), l)
		time.Sleep(5 * time.Hour)
		synctest.Wait()
		select {
		case err := <-res:
			t.Fatalf("idled while following: %v", err)
		default:
		}
		release()
		err := <-res
		if d := time.Since(start); d != 7*time.Hour || !strings.Contains(err.Error(), "no agent activity") {
			t.Fatalf("after following 5h: %v at %v, want the agent rule at 7h", err, d)
		}
	})
}

// Activity only postpones the rules, and the bridges report it on every
// request: it must not wake Wait (a goroutine switch, a timer and the
// rules' reasons formatted again, per request). Wait still fires on time:
// TestLifecycleAgentIdleEvenWithPage and TestLifecyclePageCancelsNoPageRule.
func TestLifecycleActivityDoesNotWakeWait(t *testing.T) {
	l := NewLifecycle(IdleRules{NoPageWithin: 30 * time.Minute, AgentIdle: 2 * time.Hour})
	l.PageAttached("geturl")
	l.AgentActivity("geturl")
	if len(l.changed) != 0 {
		t.Fatal("recording activity woke the idle rules' Wait")
	}
	detach := l.AgentAttached("geturl")
	l.next() // Wait sees the agent attached: no rule can fire, it waits for a change
	detach() // the rules apply again from now: Wait must recompute
	if len(l.changed) != 1 {
		t.Fatal("an agent's leaving did not wake Wait")
	}
}

// An agent's call (activity, attach, detach) does not wake a Wait that
// has a deadline: each call only moves the deadline later, and Wait looks
// again when the deadline comes. A Wait with none (an agent attached) is
// woken by the detach that gives it one.
func TestLifecycleWakesWaitOnlyWhenItHasNoDeadline(t *testing.T) {
	l := NewLifecycle(IdleRules{NoPageWithin: time.Minute, AgentIdle: 10 * time.Minute})
	if _, _, ok := l.next(); !ok {
		t.Fatal("no deadline with both rules on")
	}
	for range 3 {
		l.AgentActivity("a")
		l.AgentAttached("a")()
		l.PageAttached("a")
		l.Own()
	}
	if n := len(l.changed); n != 0 {
		t.Fatalf("a Wait with a deadline was woken (%d pending)", n)
	}
	l = NewLifecycle(IdleRules{AgentIdle: 10 * time.Minute})
	detach := l.AgentAttached("a")
	if _, _, ok := l.next(); ok {
		t.Fatal("a deadline while an agent is attached")
	}
	detach()
	if n := len(l.changed); n != 1 {
		t.Fatalf("the detach that gives Wait a deadline did not wake it (%d pending)", n)
	}
}

// With a Wait running, many calls still end in the idle exit AgentIdle
// after the last one.
func TestLifecycleIdleAfterLastOfManyCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewLifecycle(IdleRules{AgentIdle: 10 * time.Minute})
		start := time.Now()
		done := waitResult(t.Context(), l)
		for range 20 {
			time.Sleep(time.Minute)
			detach := l.AgentAttached("a")
			time.Sleep(time.Second)
			detach()
		}
		err := <-done
		if !errors.Is(err, ErrIdle) {
			t.Fatalf("err = %v", err)
		}
		if d, want := time.Since(start), 20*(time.Minute+time.Second)+10*time.Minute; d != want {
			t.Fatalf("fired after %v, want %v", d, want)
		}
	})
}
