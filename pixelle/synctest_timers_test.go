package pixelle

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// The contract's own timings on a fake clock: hello within 5 s (else
// 1008), OUTCOME_UNKNOWN after 12 s without a result, pairing codes that
// live 5 minutes and die when replaced.
func TestContractTimersReal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newBubbleRelay(t)
		defer r.stop()

		silent, err := adaptertest.DialPipe(r.ep, "/relay", adaptertest.DialOptions{Origin: website})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(DefaultAuthTimeout - 100*time.Millisecond)
		synctest.Wait()
		if isClosed(silent) {
			t.Fatal("closed before the 5 s authentication deadline")
		}
		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		if code, _ := silent.CloseCode(); !isClosed(silent) || code != closePolicy {
			t.Fatalf("after 5 s without hello: closed %v, code %d; want 1008", isClosed(silent), code)
		}

		id, tok, _ := r.rl.newSession(website)
		br := r.browser(t, id, tok)
		creds, err := r.rl.pairCode(code(t, br))
		if err != nil {
			t.Fatal(err)
		}
		next(t, br) // paired
		ag := r.dial(t, "", map[string]string{"type": "hello", "role": "agent", "sessionId": creds.SessionID, "token": creds.Token})
		next(t, ag) // ready
		ag.SendText(cmdMsg("c1", `{"method":"state.read"}`))
		synctest.Wait()
		next(t, br) // the command; the browser never answers
		time.Sleep(DefaultCommandTimeout - 100*time.Millisecond)
		synctest.Wait()
		if m, err := ag.Next(0); err == nil {
			t.Fatalf("answer before 12 s: %s", m.Data)
		}
		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		if m := next(t, ag); errCode(m) != "OUTCOME_UNKNOWN" || m["id"] != "c1" {
			t.Fatalf("after 12 s: %v", m)
		}

		replaced := code(t, br)
		time.Sleep(time.Minute)
		live := code(t, br)
		if _, err := r.rl.pairCode(replaced); err == nil {
			t.Fatal("a replaced code paired")
		}
		time.Sleep(DefaultPairCodeTTL - time.Millisecond)
		if _, err := r.rl.pairCode(live); err != nil {
			t.Fatal("a code was refused inside its 5 minutes")
		}
		next(t, br) // paired
		late := code(t, br)
		time.Sleep(DefaultPairCodeTTL)
		if _, err := r.rl.pairCode(late); err == nil {
			t.Fatal("a code paired after its 5 minutes")
		}
	})
}

func isClosed(c *adaptertest.WSClient) bool {
	select {
	case <-c.Closed():
		return true
	default:
		return false
	}
}
