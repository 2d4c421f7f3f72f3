package files

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"syscall"

	"github.com/hubdev/hub/geturl/sandbox"
)

// Reader serves /r and /t inside one scope. It holds no state between calls
// and is safe for concurrent use.
type Reader struct {
	Scope  *sandbox.Scope
	Limits Limits
}

// NewReader returns a Reader with the default limits.
func NewReader(scope *sandbox.Scope) *Reader { return &Reader{Scope: scope} }

// item is one target between loading and cutting to its allowance.
type item struct {
	res     FileResult
	text    []byte  // file: the requested lines (at most SingleFileCap+1 bytes kept)
	entries []Entry // directory: the requested entries
	demand  int     // bytes the whole request would take
	endLine int     // file: last requested line that exists
	more    bool    // file: lines beyond the window exist but are unknown (large file)
}

// Read reads targets in order and shares the text allowance among them.
func (r *Reader) Read(targets []Target) (Result, error) {
	lim := r.Limits.withDefaults()
	switch {
	case len(targets) == 0:
		return Result{}, ErrNoPaths
	case len(targets) > lim.MaxPaths:
		return Result{}, ErrTooManyPaths
	}
	for _, t := range targets {
		if t.Start < 0 || t.End < 0 || (t.End > 0 && t.Start > t.End) {
			return Result{}, ErrBadRange
		}
	}
	items := make([]item, len(targets))
	demands := make([]int, len(targets))
	for i, t := range targets {
		items[i] = r.load(t, lim)
		demands[i] = items[i].demand
	}
	budget := lim.SingleFileCap
	if len(targets) > 1 {
		budget = lim.Budget - len(targets)*lim.Overhead
	}
	alloc := share(demands, budget, lim.SingleFileCap)
	res := Result{
		Files:           make([]FileResult, len(items)),
		RequestedPaths:  make([]string, len(targets)),
		ReturnedPaths:   []string{},
		CompletePaths:   []string{},
		IncompletePaths: []string{},
		UnreturnedPaths: []string{},
		AllComplete:     true,
	}
	for i := range items {
		it := &items[i]
		it.cut(alloc[i], targets[i].Start)
		f := it.res
		res.Files[i] = f
		res.RequestedPaths[i] = r.Scope.Display(targets[i].Path)
		switch {
		case f.Error != nil:
			res.UnreturnedPaths = append(res.UnreturnedPaths, f.Path)
			res.AllComplete = false
		case f.Complete:
			res.ReturnedPaths = append(res.ReturnedPaths, f.Path)
			res.CompletePaths = append(res.CompletePaths, f.Path)
		default:
			res.ReturnedPaths = append(res.ReturnedPaths, f.Path)
			res.IncompletePaths = append(res.IncompletePaths, f.Path)
			res.AllComplete = false
		}
	}
	return res, nil
}

// load resolves and reads one target up to the point where only its
// allowance is missing.
func (r *Reader) load(t Target, lim Limits) item {
	p, err := r.Scope.ResolveExisting(t.Path)
	if err != nil {
		return failed(r.Scope.Display(t.Path), err)
	}
	// O_NONBLOCK: opening a FIFO must not wait for a writer. O_NOFOLLOW:
	// p.Host is a realpath, so a link here was swapped in after resolving.
	f, err := os.OpenFile(p.Host, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return failed(p.Virtual, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return failed(p.Virtual, err)
	}
	it := item{res: FileResult{Path: p.Virtual, Host: p.Host, Size: fi.Size()}}
	switch {
	case fi.IsDir():
		it.res.Kind = KindDir
		r.loadDir(&it, f, t, lim)
	case fi.Mode().IsRegular():
		it.res.Kind = KindFile
		loadFile(&it, f, fi, t, lim)
	default:
		return failed(p.Virtual, errUnsupported)
	}
	return it
}

var (
	errUnsupported = errors.New("not a regular file or directory")
	errPastEnd     = errors.New("start line is past the end")
	errPastScan    = errors.New("start line is beyond the part of this large file that is read")
)

// failed reports a path that produced no result, with an agent-safe error.
func failed(display string, err error) item {
	return item{res: FileResult{Path: display, Error: pathError(err)}}
}

func pathError(err error) *PathError {
	if code := sandbox.Code(err); code != "" {
		return &PathError{Code: code, Message: err.Error()}
	}
	switch {
	case errors.Is(err, errUnsupported):
		return &PathError{Code: "unsupported_file_type", Message: err.Error()}
	case errors.Is(err, errPastEnd):
		return &PathError{Code: "start_past_end", Message: err.Error()}
	case errors.Is(err, errPastScan):
		return &PathError{Code: "start_past_scan_limit", Message: err.Error()}
	case errors.Is(err, fs.ErrNotExist):
		return &PathError{Code: "path_not_found", Message: "path does not exist"}
	case errors.Is(err, fs.ErrPermission):
		return &PathError{Code: "permission_denied", Message: "permission denied"}
	}
	// OS errors name the host path; say only that reading failed.
	return &PathError{Code: "read_failed", Message: "the path could not be read"}
}

// readPrefix reads up to limit+1 bytes (one more than allowed, to tell
// whether more exist), sizing the buffer from the stat so that a small file
// takes one read plus the read that sees EOF.
func readPrefix(f *os.File, size, limit int64) ([]byte, error) {
	buf := make([]byte, 0, min(max(size, 0), limit)+1)
	for int64(len(buf)) <= limit {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, max(512, len(buf)))
		}
		m, err := f.Read(buf[len(buf):min(int64(cap(buf)), limit+1)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}
