package pixelle

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// BenchmarkRoundTrip measures agent command → relay → browser → relay →
// agent over real loopback WebSockets, with 1 and 16 agents sending
// concurrently to one session's browser. Every side runs in this process,
// so process-cpu-µs/op is the round trip's whole CPU.
func BenchmarkRoundTrip(b *testing.B) {
	for _, conc := range []int{1, 16} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) { benchRoundTrip(b, conc) })
	}
}

func benchRoundTrip(b *testing.B, conc int) {
	s := New(&Config{Website: website})
	h := adaptertest.Start(b, s, adaptertest.Options{})
	r := &testRelay{Harness: h, s: s}
	id, tok := r.createSessionTB(b)
	br := h.MustDial("/relay", adaptertest.DialOptions{Origin: website})
	br.SendText(fmt.Sprintf(`{"type":"hello","role":"browser","sessionId":%q,"token":%q}`, id, tok))
	mustNext(b, br)
	br.SendText(`{"type":"pair.create"}`)
	var pc struct{ Code string }
	json.Unmarshal(mustNext(b, br), &pc)
	resp := h.Do(adaptertest.Request{Method: "POST", Path: "/api/pair", Body: []byte(`{"code":"` + pc.Code + `"}`)})
	var cr pairResult
	json.Unmarshal(resp.Body, &cr)
	mustNext(b, br) // paired
	go func() {
		for {
			msg, err := br.Next(time.Minute)
			if err != nil {
				return
			}
			var m struct{ ID string }
			json.Unmarshal(msg.Data, &m)
			if br.SendText(`{"type":"result","id":"`+m.ID+`","result":`+stateFixture+`}`) != nil {
				return
			}
		}
	}()
	agents := make([]*adaptertest.WSClient, conc)
	for i := range agents {
		a := h.MustDial("/relay", adaptertest.DialOptions{})
		a.SendText(fmt.Sprintf(`{"type":"hello","role":"agent","sessionId":%q,"token":%q}`, cr.SessionID, cr.Token))
		mustNext(b, a)
		agents[i] = a
	}
	lat := make([][]time.Duration, conc)
	measured := adaptertest.MeasureProcess(b)
	start := time.Now()
	var wg sync.WaitGroup
	for i, a := range agents {
		n := b.N / conc
		if i < b.N%conc {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range n {
				t0 := time.Now()
				if err := a.SendText(fmt.Sprintf(`{"type":"command","id":"c%d","command":{"method":"state.read"}}`, j)); err != nil {
					b.Error(err)
					return
				}
				if _, err := a.Next(10 * time.Second); err != nil {
					b.Error(err)
					return
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	measured()
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(all[min(len(all)-1, len(all)*99/100)].Microseconds()), "p99-µs")
		b.ReportMetric(float64(len(all))/elapsed.Seconds(), "commands/s")
	}
}

func (r *testRelay) createSessionTB(b testing.TB) (string, string) {
	resp := r.Do(adaptertest.Request{Method: "POST", Path: "/api/sessions", Header: browserHeader()})
	var v struct{ ID, BrowserToken string }
	if err := json.Unmarshal(resp.Body, &v); err != nil {
		b.Fatal(err)
	}
	return v.ID, v.BrowserToken
}

func mustNext(b testing.TB, c *adaptertest.WSClient) []byte {
	b.Helper()
	m, err := c.Next(wait)
	if err != nil {
		b.Fatal(err)
	}
	return m.Data
}

// BenchmarkParseMessage measures the relay's per-frame parse of a command.
func BenchmarkParseMessage(b *testing.B) {
	frame := []byte(`{"type":"command","id":"client-1","command":{"method":"nodes.upsert","expectedRevision":3,"operationId":"op-1","params":{"nodes":[{"id":"a","kind":"note","title":"T","content":"hello"}]}}}`)
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if _, err := parseMessage(frame); err != nil {
			b.Fatal(err)
		}
	}
}
