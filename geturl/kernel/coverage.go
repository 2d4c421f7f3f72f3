package kernel

// Coverage receives what each /r returned, per file fingerprint, so the
// mutation kernel can require complete current read coverage before a
// whole-file overwrite. A nil Coverage records nothing.
type Coverage interface {
	Record(o Observation)
}

// Observation is one file's share of one read.
type Observation struct {
	Path        string // /project/...
	Fingerprint string
	StartLine   int // first line returned (1-based)
	EndLine     int // last line returned, inclusive; 0 when none
	TotalLines  int
	Complete    bool // the whole current file was returned by this read
}
