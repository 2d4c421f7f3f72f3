package files

// Kinds of filesystem entry, as reported in results, listings and Stat.
const (
	KindFile    = "file"
	KindDir     = "dir"
	KindSymlink = "symlink"
	KindOther   = "other"
)

// Result is the answer to one Read.
type Result struct {
	Files []FileResult `json:"files"`
	// RequestedPaths echoes each requested path, virtual when it names
	// something inside the scope.
	RequestedPaths []string `json:"requestedPaths"`
	// ReturnedPaths are the virtual paths that produced a result.
	ReturnedPaths []string `json:"returnedPaths"`
	// AllComplete is true when every requested path came back complete.
	AllComplete bool `json:"allComplete"`
	// CompletePaths came back with everything requested; IncompletePaths
	// came back cut short (follow NextStartLine); UnreturnedPaths failed.
	CompletePaths   []string `json:"completePaths"`
	IncompletePaths []string `json:"incompletePaths"`
	UnreturnedPaths []string `json:"unreturnedPaths"`
}

// FileResult is one path of a Read.
type FileResult struct {
	// Path is the virtual path (the request's display form when it failed).
	Path string `json:"path"`
	Kind string `json:"kind,omitempty"`
	// Content is the text of lines StartLine..EndLine, byte for byte
	// (newlines included), so consecutive pages concatenate to the file.
	Content string `json:"content"`
	// StartLine and EndLine (1-based, inclusive) are the lines or, for a
	// directory, the entries returned; both 0 when nothing was.
	StartLine int `json:"startLine"`
	EndLine   int `json:"endLine"`
	// TotalLines is the file's line count (entry count for a directory),
	// -1 when the file was too large to count.
	TotalLines int   `json:"totalLines"`
	Size       int64 `json:"size"`
	// Fingerprint identifies the file's bytes (truncated SHA-256 hex); for
	// files above MaxScanBytes it is derived from size and mtime and starts
	// with "meta-".
	Fingerprint string `json:"fingerprint,omitempty"`
	// Complete is true when everything requested was returned.
	Complete bool `json:"complete"`
	// Truncated is true when the allowance cut the request short; then
	// NextStartLine (if not 0) is where the next page starts.
	Truncated     bool `json:"truncated"`
	NextStartLine int  `json:"nextStartLine,omitempty"`
	// StartByte is how many bytes of line StartLine come before Content
	// (the request's skip=, at a UTF-8 boundary).
	StartByte int `json:"startByte,omitempty"`
	// NextSkip goes with NextStartLine when the next page continues a
	// clipped line: the bytes of that line shown so far.
	NextSkip int `json:"nextSkip,omitempty"`
	// ClippedLine is set when line EndLine was too long for the allowance
	// and only a piece of it is in Content; the next page continues it
	// (NextStartLine, NextSkip), and the line counts as read once every
	// piece has been.
	ClippedLine bool `json:"clippedLine,omitempty"`
	// Binary files are reported without content.
	Binary bool `json:"binary,omitempty"`
	// InvalidUTF8 warns that Content has bytes that are not UTF-8 (a JSON
	// encoder will replace them).
	InvalidUTF8 bool `json:"invalidUtf8,omitempty"`
	// Entries is a directory's listing, StartLine..EndLine of its sorted
	// entries. DirPartial is set when the directory had more than
	// Limits.MaxDirNames entries and only a subset was sorted.
	Entries    []Entry `json:"entries,omitempty"`
	DirPartial bool    `json:"dirPartial,omitempty"`
	// Error is set when the path could not be read.
	Error *PathError `json:"error,omitempty"`

	// Host is the canonical host path, the key for coverage. It is never
	// serialized and must not be shown to the agent.
	Host string `json:"-"`
}

// Entry is one directory entry.
type Entry struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	Size int64  `json:"size,omitempty"`
}

// PathError is an agent-safe per-path failure.
type PathError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *PathError) Error() string { return e.Message }

// Returned reports whether the path produced a result.
func (r *FileResult) Returned() bool { return r.Error == nil }
