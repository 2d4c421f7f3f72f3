package aiui

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/aiui/channel"
	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/aiui/intent"
	"github.com/hubdev/hub/aiui/tools"
)

// sink is a benchmark format: raw codec, payload counted and dropped.
type sink struct{ ctx *channel.ThreadContext }

func (s sink) OnMessage(_ any, meta channel.MessageMeta) error {
	if meta.Fin {
		s.ctx.Close()
	}
	return nil
}

func withSink(_ *Config, s *Server) {
	s.Formats = func(d *intent.Deps) channel.Registry {
		r := DefaultFormats(d)
		r["bench-sink"] = channel.Format{Codec: frame.Raw, New: func(ctx *channel.ThreadContext) channel.Processor { return sink{ctx} }}
		return r
	}
}

// BenchmarkWSIngest measures payload MiB/s acked over /ws, pipelining up
// to 16 frames per connection.
func BenchmarkWSIngest(b *testing.B) {
	for _, size := range []int{64 << 10, 1 << 20} {
		for _, conns := range []int{1, 8} {
			b.Run(fmt.Sprintf("frame=%dKiB/conns=%d", size>>10, conns), func(b *testing.B) {
				h, _ := start(b, withSink)
				clients := make([]*adaptertest.WSClient, conns)
				for i := range clients {
					clients[i] = h.MustDial("/ws", adaptertest.DialOptions{})
					sendAck(b, clients[i], helloFrame(b, "bench-sink"))
				}
				f := mustFrame(b, frame.Envelope{V: 1, Kind: "data", ThreadID: "bench"}, make([]byte, size))
				b.SetBytes(int64(size))
				b.ResetTimer()
				start := time.Now()
				var wg sync.WaitGroup
				per := (b.N + conns - 1) / conns
				for _, c := range clients {
					wg.Add(1)
					go func() {
						defer wg.Done()
						const window = 16
						sent, acked := 0, 0
						for acked < per {
							for sent < per && sent-acked < window {
								c.SendBinary(f)
								sent++
							}
							m, err := c.Next(30 * time.Second)
							if err != nil {
								b.Error(err)
								return
							}
							var r frame.Response
							json.Unmarshal(m.Data, &r)
							if !r.OK {
								b.Errorf("nack: %s", m.Data)
								return
							}
							acked++
						}
					}()
				}
				wg.Wait()
				el := time.Since(start)
				b.ReportMetric(float64(per*conns*size)/(1<<20)/el.Seconds(), "MiB/s")
			})
		}
	}
}

func percentiles(d []time.Duration) (p50, p99 float64) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	at := func(q float64) float64 { return float64(d[int(q*float64(len(d)-1))].Microseconds()) }
	return at(0.50), at(0.99)
}

// BenchmarkAckLatency measures one small frame → its ack, one at a time.
func BenchmarkAckLatency(b *testing.B) {
	h, _ := start(b, withSink)
	c := h.MustDial("/ws", adaptertest.DialOptions{})
	sendAck(b, c, helloFrame(b, "bench-sink"))
	f := mustFrame(b, frame.Envelope{V: 1, Kind: "data", ThreadID: "lat"}, make([]byte, 256))
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		c.SendBinary(f)
		if _, err := c.Next(10 * time.Second); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	p50, p99 := percentiles(lat)
	b.ReportMetric(p50, "p50-µs")
	b.ReportMetric(p99, "p99-µs")
}

// BenchmarkPageToolsCall measures the control-route call → page → result
// round trip (what page_tools_call and `hub aiui call` do).
func BenchmarkPageToolsCall(b *testing.B) {
	h, _ := start(b, nil)
	page := h.MustDial("/tools", adaptertest.DialOptions{})
	page.SendText(`{"v":1,"type":"register","ns":"bench","hash":"h","tools":[{"name":"echo","description":"echo"}]}`)
	if _, err := page.Next(5 * time.Second); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			m, err := page.Next(time.Second)
			if err != nil {
				continue
			}
			var call map[string]any
			json.Unmarshal(m.Data, &call)
			page.SendText(fmt.Sprintf(`{"v":1,"type":"result","callId":%q,"ok":true,"value":1}`, call["callId"]))
		}
	}()
	cl := control(b, h)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		res, err := cl.Call(ctx, tools.CallRequest{Name: "echo"})
		if err != nil || !res.OK {
			b.Fatalf("%v %+v", err, res)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	p50, p99 := percentiles(lat)
	b.ReportMetric(p50, "p50-µs")
	b.ReportMetric(p99, "p99-µs")
	cancel()
}
