package pixelle

import (
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/hub/ws"
)

// bubbleRelay runs the relay's state and /relay endpoint without a
// listener, so a synctest bubble can drive it over net.Pipe with the
// contract's real timings on a fake clock.
type bubbleRelay struct {
	rl      *relay
	sockets *ws.Sockets
	ep      *ws.Endpoint
}

func newBubbleRelay(t *testing.T) *bubbleRelay {
	return newBubbleRelayLog(t, slog.New(slog.DiscardHandler))
}

// newBubbleRelayLog is newBubbleRelay logging to log.
func newBubbleRelayLog(t *testing.T, log *slog.Logger) *bubbleRelay {
	s := New(&Config{Website: website})
	b := &bubbleRelay{sockets: &ws.Sockets{}}
	b.rl = newRelay(s, &adapters.Env{Log: log}, DefaultPort, b.sockets)
	b.ep = b.rl.endpoint
	return b
}

// stop ends every socket and timer, so the bubble's goroutines all exit.
func (b *bubbleRelay) stop() {
	b.sockets.Shutdown(1001, "test over")
	b.sockets.Wait()
	b.rl.shutdown()
	synctest.Wait()
}

func (b *bubbleRelay) dial(t *testing.T, origin string, hello map[string]string) *adaptertest.WSClient {
	t.Helper()
	c, err := adaptertest.DialPipe(b.ep, "/relay", adaptertest.DialOptions{Origin: origin})
	if err != nil {
		t.Fatal(err)
	}
	sendJSON(t, c, hello)
	synctest.Wait()
	return c
}

func (b *bubbleRelay) browser(t *testing.T, id, tok string) *adaptertest.WSClient {
	t.Helper()
	c := b.dial(t, website, map[string]string{"type": "hello", "role": "browser", "sessionId": id, "token": tok})
	if m := next(t, c); m["type"] != "ready" {
		t.Fatalf("browser hello answered %v", m)
	}
	return c
}

func (b *bubbleRelay) alive(id string) bool {
	b.rl.mu.Lock()
	defer b.rl.mu.Unlock()
	return b.rl.sessions[id] != nil
}

// A session lives an hour without its browser (the contract's TTL): a
// browser back within the hour keeps it, and the clock restarts when it
// leaves again; an hour gone ends the session and closes its agents; a
// session whose browser never connected expires too.
func TestSessionExpiryRealTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newBubbleRelay(t)
		defer r.stop()
		id, tok, err := r.rl.newSession(website)
		if err != nil {
			t.Fatal(err)
		}
		br := r.browser(t, id, tok)
		creds, err := r.rl.pairCode(code(t, br))
		if err != nil {
			t.Fatal(err)
		}
		next(t, br) // paired
		ag := r.dial(t, "", map[string]string{"type": "hello", "role": "agent", "sessionId": creds.SessionID, "token": creds.Token})
		next(t, ag) // ready

		br.Close()
		synctest.Wait()
		time.Sleep(59 * time.Minute)
		synctest.Wait()
		if !r.alive(id) {
			t.Fatal("the session expired within the hour")
		}
		br = r.browser(t, id, tok) // back within the TTL
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		if !r.alive(id) {
			t.Fatal("a session with its browser attached expired")
		}
		br.Close()
		synctest.Wait()
		time.Sleep(59 * time.Minute)
		synctest.Wait()
		if !r.alive(id) {
			t.Fatal("the browser's second absence was not timed from its leaving")
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if r.alive(id) {
			t.Fatal("the session outlived an hour without its browser")
		}
		if code, _ := ag.CloseCode(); code != closePolicy {
			t.Fatalf("agent closed with %d, want %d", code, closePolicy)
		}

		never, _, _ := r.rl.newSession(website)
		time.Sleep(DefaultSessionTTL + time.Second)
		synctest.Wait()
		if r.alive(never) {
			t.Fatal("a session whose browser never came did not expire")
		}
	})
}

// An expiry timer that fired in the old period (its callback waiting for
// the lock while the browser came back and left) must not cut the fresh
// period short.
func TestStaleExpiryTimerIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newBubbleRelay(t)
		defer r.stop()
		id, _, _ := r.rl.newSession(website)
		r.rl.mu.Lock()
		sess := r.rl.sessions[id]
		stale := sess.expiryGen
		r.rl.armExpiryLocked(sess) // the browser came back and left: a fresh period
		r.rl.mu.Unlock()
		r.rl.expire(sess, stale) // the old period's callback, arriving late
		if !r.alive(id) {
			t.Fatal("a stale expiry callback removed a session inside its fresh TTL")
		}
		time.Sleep(DefaultSessionTTL - time.Second)
		synctest.Wait()
		if !r.alive(id) {
			t.Fatal("the fresh period ended early")
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if r.alive(id) {
			t.Fatal("the fresh period never ended")
		}
	})
}
