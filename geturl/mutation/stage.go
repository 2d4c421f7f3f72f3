package mutation

import (
	"context"

	"github.com/hubdev/hub/geturl/engine/staging"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// StageSpec is /s: one chunk, blob=&i=&count= before the raw tail.
var StageSpec = &transport.Spec{
	Route: "/s",
	Params: []transport.Param{
		required(blobParam("blob")),
		{Name: "i", Aliases: []string{"index"}, Kind: transport.Int, Min: 0, Max: staging.MaxChunks - 1, Required: true},
		required(countParam("count")),
	},
	Raw: true, RawMeaning: "the chunk's content",
	Groups: []transport.Group{{Names: []string{"raw"}, Required: true}},
}

// BlobSpec is /b: one blob's status.
var BlobSpec = &transport.Spec{
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

// Stage answers /s. It is not journaled: a chunk is immutable, so sending
// it again is a no-op by construction.
func (h *Host) Stage(_ context.Context, c *route.Call) (any, *transport.Error) {
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

// BlobStatus answers /b.
func (h *Host) BlobStatus(_ context.Context, c *route.Call) (any, *transport.Error) {
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

func statusURL(c *route.Call, name string) string {
	return transport.URL(c.Bases.Mutation, "/b", new(transport.Query).Add("blob", name))
}
