package ws

import (
	"sync"
	"testing"

	"github.com/hubdev/hub/hub"
	"github.com/lxzan/gws"
)

type panicHandler struct{}

func (panicHandler) Open(c *Conn) Session { return panicSession{} }

type panicSession struct{}

func (panicSession) Message(*gws.Message) { panic("message boom") }
func (panicSession) Closed(error)         {}

// A panic in a handler's Message drops that socket and reaches the
// guard of the server's context; the server keeps serving.
func TestWSHandlerPanicReachesTheGuard(t *testing.T) {
	var mu sync.Mutex
	var got []*hub.PanicError
	s := startWS(t, panicHandler{}, Options{})
	s.sockets.SetGuard(hub.NewGuard(nil, func(pe *hub.PanicError) { mu.Lock(); got = append(got, pe); mu.Unlock() }))
	ch := newClientHandler()
	c := s.dial(t, ch)
	c.WriteString("hi")
	waitClose(t, ch)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].Where != "websocket message" {
		t.Fatalf("reports = %v", got)
	}
	ch2 := newClientHandler()
	c2 := s.dial(t, ch2)
	c2.WriteClose(1000, nil)
	waitClose(t, ch2)
}
