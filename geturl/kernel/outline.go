package kernel

import (
	"context"
	"errors"
	"io"
	"os"
	"syscall"

	"github.com/hubdev/hub/geturl/outline"
	"github.com/hubdev/hub/geturl/sandbox"
	"github.com/hubdev/hub/geturl/transport"
)

// CodeUnsupportedLanguage refuses /o for files it cannot outline.
const CodeUnsupportedLanguage = "unsupported_language"

// outlineSpec is /o: one path (alias file).
var outlineSpec = &transport.Spec{
	Route:  "/o",
	Params: []transport.Param{{Name: "path", Aliases: []string{"file"}, Required: true}},
}

type outlineAnswer struct {
	OK   bool   `json:"ok"`
	Path string `json:"path"`
	Hint string `json:"hint"`
	outline.Outline
}

// outlineFile answers /o: imports and named declarations with line numbers
// of a JS/TS or Go file. Another kind of file gets the exact /r URL instead.
func (k *Kernel) outlineFile(_ context.Context, c *Call) (any, *transport.Error) {
	sc := c.Session.Scope()
	p := c.Args.Text("path")
	rp, err := sc.ResolveExisting(p)
	if err != nil {
		return nil, pathFailure(sc.Display(p), err)
	}
	// As /r does: no FIFO can block the open, and a link swapped in after
	// resolving is refused.
	fd, err := sandbox.Open(rp.Host, syscall.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		return nil, pathFailure(rp.Virtual, err)
	}
	f := os.NewFile(uintptr(fd), rp.Host)
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, &transport.Error{Code: CodeNotAFile, Detail: "path=" + rp.Virtual, Hint: "outline takes one source file; /r lists a directory",
			Retryable: true, Action: transport.ActionCorrectRequest}
	}
	src, err := io.ReadAll(io.LimitReader(f, outline.MaxSourceBytes+1))
	if err != nil {
		return nil, pathFailure(rp.Virtual, err)
	}
	o, err := outline.File(rp.Virtual, src)
	// A .go file with no package clause go/parser can find (a stub, a
	// typo, nesting past its limit) was read fine: /r shows it.
	if errors.Is(err, outline.ErrUnsupported) || errors.Is(err, outline.ErrNotGo) {
		return nil, &transport.Error{
			Code: CodeUnsupportedLanguage, Detail: "path=" + rp.Virtual + ": " + err.Error(), Retryable: true,
			Hint: "read it with /r instead", Action: transport.ActionFetchRepair,
			Repair: c.URL("/r", new(transport.Query).Add("path", rp.Virtual)),
		}
	}
	if err != nil {
		return nil, &transport.Error{Code: CodeReadFailed, Detail: "path=" + rp.Virtual}
	}
	return outlineAnswer{OK: true, Path: rp.Virtual, Outline: o,
		Hint: "read one declaration with /r?path=<path>&start=<line>&end=<endLine>"}, nil
}
