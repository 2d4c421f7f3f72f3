package mutation

import (
	"context"

	"github.com/hubdev/hub/geturl/kernel"
	"github.com/hubdev/hub/geturl/staging"
	"github.com/hubdev/hub/geturl/transport"
)

// stageSpec is /s: one chunk, blob=&i=&count= before the raw tail.
var stageSpec = &transport.Spec{
	Route: "/s",
	Params: []transport.Param{
		required(blobParam("blob")),
		{Name: "i", Aliases: []string{"index"}, Kind: transport.Int, Min: 0, Max: staging.MaxChunks - 1, Required: true},
		required(countParam("count")),
	},
	Raw: true, RawMeaning: "the chunk's content",
	Groups: []transport.Group{{Names: []string{"raw"}, Required: true}},
}

// blobSpec is /b: one blob's status.
var blobSpec = &transport.Spec{
	Route:  "/b",
	Params: []transport.Param{required(blobParam("blob"))},
}

type stageAnswer struct {
	OK bool `json:"ok"`
	staging.Ack
	StatusURL string `json:"statusUrl"`
	Hint      string `json:"hint,omitempty"`
}

type blobAnswer struct {
	OK bool `json:"ok"`
	staging.Status
	StatusURL string `json:"statusUrl"`
}

// stage answers /s. It is not journaled: a chunk is immutable, so sending
// it again is a no-op by construction.
func (h *Host) stage(_ context.Context, c *kernel.Call) (any, *transport.Error) {
	st, terr := prepare(c, "")
	if terr != nil {
		return nil, terr
	}
	raw, _ := c.Args.Raw()
	name := c.Args.Text("blob")
	ack, f := st.Staging.Put(name, c.Args.IntOr("i", 0), c.Args.IntOr("count", 0), raw)
	if f != nil {
		return nil, transport.ErrorOf(f)
	}
	a := stageAnswer{OK: true, Ack: ack, StatusURL: statusURL(c, name)}
	if !ack.Complete {
		a.Hint = "a snapshot: chunks sent concurrently may land in any order; statusUrl is authoritative"
	} else {
		a.Hint = "complete: reference it with blob=" + name + " (and count=" + itoa(ack.Count) + ")"
	}
	return a, nil
}

// blobStatus answers /b.
func (h *Host) blobStatus(_ context.Context, c *kernel.Call) (any, *transport.Error) {
	st, terr := prepare(c, "")
	if terr != nil {
		return nil, terr
	}
	name := c.Args.Text("blob")
	s, f := st.Staging.Status(name)
	if f != nil {
		return nil, transport.ErrorOf(f)
	}
	return blobAnswer{OK: true, Status: s, StatusURL: statusURL(c, name)}, nil
}

func statusURL(c *kernel.Call, name string) string {
	return transport.URL(c.Bases.Mutation, "/b", new(transport.Query).Add("blob", name))
}
