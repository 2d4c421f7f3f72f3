package kernel

import (
	"context"
	"errors"
	"io"
	"os"
	"sync/atomic"
	"syscall"

	"github.com/hubdev/hub/geturl/engine/outline"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// Error codes of /o.
const (
	// CodeUnsupportedLanguage refuses /o for files it cannot outline.
	CodeUnsupportedLanguage = "unsupported_language"
	// CodeOutlineBusy: every outline slot is taken and the queue for
	// them is full (or the request ended while it waited).
	CodeOutlineBusy = "outline_busy"
)

// DefaultOutlines is how many /o requests outline at once when
// Options.Outlines is 0. Each holds its source (up to
// outline.MaxSourceBytes) and the outline's working memory (tens of
// bytes per byte up to outline.MaxParseBytes, little beyond).
const DefaultOutlines = 2

// outlineWaiters is how many requests may wait for an outline slot, per
// slot; past that an /o answers outline_busy at once.
const outlineWaiters = 4

// outlineGate bounds the outlines running at once and the requests
// waiting for one: what /o can make the process hold is bounded whatever
// number of requests a read token sends. A waiter waits as long as its
// request lasts, no longer.
type outlineGate struct {
	slots      chan struct{}
	waiting    atomic.Int32
	maxWaiting int32
}

func newOutlineGate(n int) *outlineGate {
	if n <= 0 {
		n = DefaultOutlines
	}
	return &outlineGate{slots: make(chan struct{}, n), maxWaiting: int32(n * outlineWaiters)}
}

// acquire takes a slot, waiting while ctx lasts if the queue has room. It
// returns false when it got none.
func (g *outlineGate) acquire(ctx context.Context) (release func(), ok bool) {
	release = func() { <-g.slots }
	select {
	case g.slots <- struct{}{}:
		return release, true
	default:
	}
	if g.waiting.Add(1) > g.maxWaiting {
		g.waiting.Add(-1)
		return nil, false
	}
	defer g.waiting.Add(-1)
	select {
	case g.slots <- struct{}{}:
		return release, true
	case <-ctx.Done():
		return nil, false
	}
}

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
// The file is read and outlined holding a slot of the kernel's
// outlineGate; without one the answer is the retryable outline_busy.
func (k *Kernel) outlineFile(ctx context.Context, c *route.Call) (any, *transport.Error) {
	sc := c.Session.Scope()
	p := c.Args.Text("path")
	rp, err := sc.ResolveExisting(p)
	if err != nil {
		return nil, pathFailure(sc.Display(p), err)
	}
	// As /r does: no FIFO can block the open, and a link swapped in after
	// resolving is refused.
	fd, err := sc.Open(rp.Host, syscall.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		return nil, pathFailure(rp.Virtual, err)
	}
	f := os.NewFile(uintptr(fd), rp.Host)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, &transport.Error{Code: CodeNotAFile, Detail: "path=" + rp.Virtual, Hint: "outline takes one source file; /r lists a directory",
			Retryable: true, Action: fault.ActionCorrectRequest}
	}
	release, ok := k.outlines.acquire(ctx)
	if !ok {
		return nil, &transport.Error{Code: CodeOutlineBusy, Detail: "the outlines running at once are capped, and as many requests wait",
			Hint: "fetch the retry URL (this same request) again shortly", Retryable: true, Action: fault.ActionRetryLater,
			Retry: c.Base() + c.Target.Rewrite(c.Route.Path, nil, "")}
	}
	defer release()
	src, err := readSource(f, fi.Size())
	if err != nil {
		return nil, pathFailure(rp.Virtual, err)
	}
	o, err := outline.File(rp.Virtual, src)
	// A .go file with no package clause go/parser can find (a stub, a
	// typo, nesting past its limit) was read fine: /r shows it.
	if errors.Is(err, outline.ErrUnsupported) || errors.Is(err, outline.ErrNotGo) {
		return nil, &transport.Error{
			Code: CodeUnsupportedLanguage, Detail: "path=" + rp.Virtual + ": " + err.Error(), Retryable: true,
			Hint: "read it with /r instead", Action: fault.ActionFetchRepair,
			Repair: c.URL("/r", new(transport.Query).Add("path", rp.Virtual)),
		}
	}
	if err != nil {
		return nil, &transport.Error{Code: CodeReadFailed, Detail: "path=" + rp.Virtual}
	}
	hint := "read one declaration with /r?path=<path>&start=<line>&end=<endLine>"
	if o.Scanned {
		hint += "; the file is large: outlined by a token scan, without a syntax check"
	}
	return outlineAnswer{OK: true, Path: rp.Virtual, Outline: o, Hint: hint}, nil
}

// readSource reads what an outline looks at: up to one byte past
// outline.MaxSourceBytes (so a longer file is outlined as truncated), into
// one buffer of the size the file has (io.ReadAll's growth would allocate
// about twice the file on the way). A file that grew since its size was
// taken is read up to that size and one byte.
func readSource(f io.Reader, size int64) ([]byte, error) {
	src := make([]byte, min(max(size, 0), outline.MaxSourceBytes)+1)
	n, err := io.ReadFull(f, src)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return src[:n], err
}
