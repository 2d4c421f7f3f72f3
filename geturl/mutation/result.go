package mutation

import (
	"context"
	"strconv"

	"github.com/hubdev/hub/geturl/engine/intents"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// ResultSpec is /j: a call id and how long to wait for it.
var ResultSpec = &transport.Spec{
	Route:  "/j",
	Params: []transport.Param{required(transport.CallParam()), transport.WaitParam()},
}

// Result answers /j: the intent's record, after waiting up to wait= for
// it to finish. Polling is never a replay and never runs anything.
func (h *Host) Result(ctx context.Context, c *route.Call) (any, *transport.Error) {
	st, terr := prepare(c, "")
	if terr != nil {
		return nil, terr
	}
	call := c.Args.Text("call")
	rec, ok := st.Journal.Wait(ctx, call, waitFor(c.Args.IntOr("wait", 0)))
	if !ok {
		return nil, &transport.Error{Code: intents.CodeUnknownCall, Detail: "call=" + call,
			Hint: "poll with the exact call id a mutation answered; the journal belongs to this session generation and is gone after rotation"}
	}
	c.Intent = rec.Call
	return h.render(c, rec, false, c.Session.Scope().Root())
}

func itoa(n int) string { return strconv.Itoa(n) }
