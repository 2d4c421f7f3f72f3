package kernel

import (
	"context"

	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// statSpec is /t: one path (alias file).
var statSpec = &transport.Spec{
	Route:  "/t",
	Params: []transport.Param{{Name: "path", Aliases: []string{"file"}, Required: true}},
}

type statAnswer struct {
	OK bool `json:"ok"`
	files.Info
}

// stat answers /t: kind, size and modification time; a symlink is described
// as a link, its target named only when inside the project.
func (k *Kernel) stat(_ context.Context, c *route.Call) (any, *transport.Error) {
	p := c.Args.Text("path")
	sc := c.Session.Scope()
	info, err := files.NewReader(sc).Stat(p)
	if err != nil {
		return nil, pathFailure(sc.Display(p), err)
	}
	return statAnswer{OK: true, Info: info}, nil
}
