package files

import "errors"

// Limits bound one read. The zero value of a field means its default.
type Limits struct {
	// MaxPaths is the most paths one call may name.
	MaxPaths int
	// SingleFileCap is the most text bytes one file may return, alone or
	// in a multi-read.
	SingleFileCap int
	// Budget is the text allowance a multi-read shares.
	Budget int
	// Overhead is the wire cost reserved per file of a multi-read (its
	// JSON fields) before Budget is shared.
	Overhead int
	// MaxScanBytes is the most bytes read from one file. Larger files are
	// served from their first MaxScanBytes (cut at a line end) with an
	// unknown total line count and a metadata-only fingerprint.
	MaxScanBytes int64
	// MaxDirNames is the most directory entries read before sorting; a
	// larger directory is listed from an arbitrary subset and says so.
	MaxDirNames int
	// MaxDirEntries is the most entries one listing returns.
	MaxDirEntries int
}

// DefaultLimits follow the spec: up to 8 paths, a 24 KiB single-file cap,
// and the same 24 KiB shared by a multi-read after 192 bytes of overhead
// per file.
var DefaultLimits = Limits{
	MaxPaths:      8,
	SingleFileCap: 24 << 10,
	Budget:        24 << 10,
	Overhead:      192,
	MaxScanBytes:  8 << 20,
	MaxDirNames:   100_000,
	MaxDirEntries: 1000,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxPaths > 0 {
		d.MaxPaths = l.MaxPaths
	}
	if l.SingleFileCap > 0 {
		d.SingleFileCap = l.SingleFileCap
	}
	if l.Budget > 0 {
		d.Budget = l.Budget
	}
	if l.Overhead > 0 {
		d.Overhead = l.Overhead
	}
	if l.MaxScanBytes > 0 {
		d.MaxScanBytes = l.MaxScanBytes
	}
	if l.MaxDirNames > 0 {
		d.MaxDirNames = l.MaxDirNames
	}
	if l.MaxDirEntries > 0 {
		d.MaxDirEntries = l.MaxDirEntries
	}
	return d
}

// Errors for a malformed call as a whole. Per-path failures are reported in
// FileResult.Error instead.
var (
	ErrNoPaths      = errors.New("no path to read")
	ErrTooManyPaths = errors.New("too many paths in one read")
	ErrBadRange     = errors.New("line range must be 1-based with start <= end")
)

// Target is one path of a read with an optional 1-based inclusive line
// range; zero Start means the first line, zero End the last. Skip is how
// many bytes of line Start to leave out, the part a read that clipped the
// line already showed (its NextSkip): a line longer than the allowance is
// read in pieces.
type Target struct {
	Path       string
	Start, End int
	Skip       int
}
