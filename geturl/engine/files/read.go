package files

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"syscall"

	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/internal/bufpool"
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
	text    []byte  // file: the requested lines (at most SingleFileCap+UTFMax bytes kept)
	entries []Entry // directory: the requested entries
	demand  int     // bytes the whole request would take
	endLine int     // file: last requested line that exists
	more    bool    // file: lines beyond the window exist but are unknown (large file)
	skip    int     // file: bytes of the first line left out (Target.Skip at a UTF-8 boundary)
	buf     *[]byte // file: the pooled read buffer text points into, released by Read
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
		if t.Start < 0 || t.End < 0 || t.Skip < 0 || (t.End > 0 && t.Start > t.End) {
			return Result{}, ErrBadRange
		}
	}
	n := len(targets)
	items := make([]item, n)
	defer func() {
		for i := range items {
			if items[i].buf != nil {
				bufpool.Put(items[i].buf) // every text is a string copy by now
			}
		}
	}()
	ints := make([]int, 2*n)
	demands, alloc := ints[:n], ints[n:]
	for i, t := range targets {
		items[i] = r.load(t, lim)
		demands[i] = items[i].demand
	}
	budget := lim.SingleFileCap
	if n > 1 {
		budget = lim.Budget - n*lim.Overhead
	}
	share(alloc, demands, budget, lim.SingleFileCap)
	// One backing array for the five path lists: each holds at most n, and
	// the capacity caps keep a caller's append from running into the next.
	paths := make([]string, 5*n)
	res := Result{
		Files:           make([]FileResult, n),
		RequestedPaths:  paths[:n:n],
		ReturnedPaths:   paths[n : n : 2*n],
		CompletePaths:   paths[2*n : 2*n : 3*n],
		IncompletePaths: paths[3*n : 3*n : 4*n],
		UnreturnedPaths: paths[4*n : 4*n : 5*n],
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
//
// A file is read through its descriptor with plain system calls: an
// *os.File would cost an allocation, a cleanup registration and a failed
// epoll registration per read for a descriptor that is used once.
func (r *Reader) load(t Target, lim Limits) item {
	p, err := r.Scope.ResolveExisting(t.Path)
	if err != nil {
		return failed(r.Scope.Display(t.Path), err)
	}
	// O_NONBLOCK: opening a FIFO must not wait for a writer. Scope.Open:
	// p.Host is a realpath, so a link on it was swapped in after resolving.
	fd, err := r.Scope.Open(p.Host, syscall.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		return failed(p.Virtual, err)
	}
	st, err := fstat(fd)
	if err != nil {
		syscall.Close(fd)
		return failed(p.Virtual, err)
	}
	it := item{res: FileResult{Path: p.Virtual, Host: p.Host, Size: st.size}}
	switch st.kind {
	case statDir:
		f := os.NewFile(uintptr(fd), p.Host) // ReadDir wants an *os.File; directories are rarer
		defer f.Close()
		it.res.Kind = KindDir
		r.loadDir(&it, f, t, lim)
	case statRegular:
		defer syscall.Close(fd)
		it.res.Kind = KindFile
		loadFile(&it, fd, st.size, st.mtime, t, lim)
	default:
		syscall.Close(fd)
		return failed(p.Virtual, errUnsupported)
	}
	return it
}

func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != syscall.EINTR {
			return err
		}
	}
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

// fail turns it into a failure, keeping its read buffer for Read to release.
func (it *item) fail(display string, err error) {
	buf := it.buf
	*it = failed(display, err)
	it.buf = buf
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
// whether more exist) into a pooled buffer sized from the stat. The caller
// puts the buffer back once nothing points into it.
//
// A small file takes one read: a read that comes back short, having brought
// the total to exactly the size fstat reported, is taken as the end instead
// of asking again to see EOF (a file growing meanwhile is a race either way;
// files whose stat size is not their content, as in /proc, read on to EOF).
func readPrefix(fd sandbox.FD, size, limit int64) (*[]byte, error) {
	bp := bufpool.Get(int(min(max(size, 0), limit) + 1))
	buf := *bp
	for int64(len(buf)) <= limit {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, max(512, len(buf)))
		}
		want := buf[len(buf):min(int64(cap(buf)), limit+1)]
		m, err := syscall.Read(fd, want)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			*bp = buf
			bufpool.Put(bp)
			return nil, err
		}
		if m == 0 {
			break
		}
		buf = buf[:len(buf)+m]
		if m < len(want) && int64(len(buf)) == size {
			break
		}
	}
	*bp = buf
	return bp, nil
}
