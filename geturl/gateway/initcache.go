package gateway

import (
	"strconv"
	"sync/atomic"

	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// initSlots bounds the Init answers kept: each is at most MaxInit bytes,
// and a laptop's agents use a handful of sessions through one or two
// origins at a time. A miss only costs rendering the answer again.
const initSlots = 16

// initKey is everything an Init answer depends on besides the kernel's
// routes, which are fixed once the gateway serves: the origin the agent
// used and the session generation's tokens, permissions and project. The
// answer is looked up by these values, not by the session's identity, so a
// rotated generation, changed permissions or a renamed project can never
// be answered from an older entry.
type initKey struct {
	origin, read, mutation, project string
	perm                            route.Permissions
}

func initKeyOf(origin string, s route.LiveSession) initKey {
	return initKey{origin: origin, read: s.Token(route.CapRead), mutation: s.Token(route.CapMutation),
		project: s.Project(), perm: s.Permissions()}
}

// initAnswer is one rendered Init answer and its Content-Length header
// value. Neither is modified once stored: net/http only reads them.
type initAnswer struct {
	key  initKey
	body []byte
	clen []string
}

// initCache holds the last initSlots Init answers, replaced round-robin.
// Lookups take no lock.
type initCache struct {
	slots [initSlots]atomic.Pointer[initAnswer]
	next  atomic.Uint32
}

func (c *initCache) get(k initKey) *initAnswer {
	for i := range c.slots {
		if a := c.slots[i].Load(); a != nil && a.key == k {
			return a
		}
	}
	return nil
}

func (c *initCache) put(a *initAnswer) {
	c.slots[(c.next.Add(1)-1)%initSlots].Store(a)
}

// initAnswer returns the Init answer for session s reached through
// origin, rendering it on a miss.
func (g *Gateway) initAnswer(origin string, s route.LiveSession) *initAnswer {
	k := initKeyOf(origin, s)
	if a := g.inits.get(k); a != nil {
		return a
	}
	body, err := transport.AppendJSON(make([]byte, 0, MaxInit), g.initContract(origin, s))
	if err != nil {
		body, _ = transport.AppendJSON(nil, &transport.Error{Code: transport.CodeInternal, Detail: "cannot encode the answer"})
		return &initAnswer{body: body, clen: []string{strconv.Itoa(len(body))}} // not kept
	}
	a := &initAnswer{key: k, body: body, clen: []string{strconv.Itoa(len(body))}}
	g.inits.put(a)
	return a
}
