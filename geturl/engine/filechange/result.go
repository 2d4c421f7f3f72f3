package filechange

// Results are JSON-ready: paths are virtual ("/project/..."), fingerprints
// are the /r fingerprints of the bytes now on disk (truncated SHA-256 hex),
// so an agent can tell whether a later read shows what it wrote.

// Changes is implemented by every result: the files the mutation changed
// (created, replaced or removed), as virtual paths, for the operator's
// activity view. It is not part of the answer.
type Changes interface {
	ChangedPaths() []string
}

var (
	_ Changes = (*WriteResult)(nil)
	_ Changes = (*EditResult)(nil)
	_ Changes = (*PatchResult)(nil)
)

// ChangedPaths is the file written.
func (r *WriteResult) ChangedPaths() []string { return []string{r.Path} }

// ChangedPaths is the file edited.
func (r *EditResult) ChangedPaths() []string { return []string{r.Path} }

// ChangedPaths are the files whose net change the commit made, in the
// order the patch first named them: a move is its source and its
// destination; a file the patch left as it was is not among them.
func (r *PatchResult) ChangedPaths() []string { return r.changed }

// WriteResult is the outcome of Write.
type WriteResult struct {
	Path string `json:"path"`
	// Created is true for a new file, false for a whole-file replacement.
	Created      bool   `json:"created"`
	BytesWritten int    `json:"bytesWritten"`
	Fingerprint  string `json:"fingerprint"`
	// PreviousFingerprint is the replaced version (replacements only).
	PreviousFingerprint string `json:"previousFingerprint,omitempty"`
	// CreatedDirs are the parent directories that had to be made.
	CreatedDirs []string `json:"createdDirs,omitempty"`
}

// EditResult is the outcome of Edit.
type EditResult struct {
	Path string `json:"path"`
	// Line is the 1-based line where the replaced text started.
	Line                int    `json:"line"`
	BytesWritten        int    `json:"bytesWritten"`
	Fingerprint         string `json:"fingerprint"`
	PreviousFingerprint string `json:"previousFingerprint"`
	// LineEndings is "crlf" when the file's CRLF line endings were applied
	// to old and/or new (see Edit); empty when the text was used as given.
	LineEndings string `json:"lineEndings,omitempty"`
	// SuggestedBulkPatch and EfficiencyHint are the serial-edit advice.
	SuggestedBulkPatch bool   `json:"suggestedBulkPatch,omitempty"`
	EfficiencyHint     string `json:"efficiencyHint,omitempty"`
}

// PatchResult is the outcome of ApplyPatch.
type PatchResult struct {
	// Files has one entry per file section of the patch, in patch order.
	Files []PatchFileResult `json:"files"`
	// Hunks is the number of hunks applied over all sections.
	Hunks int `json:"hunks"`
	// BytesWritten is what the commit wrote to disk (final contents of the
	// files it created or replaced).
	BytesWritten int `json:"bytesWritten"`

	changed []string
}

// PatchFileResult is one file section of a patch.
type PatchFileResult struct {
	// Op is "add", "update" or "delete".
	Op   string `json:"op"`
	Path string `json:"path"`
	// MovedTo is the destination of an Update File with *** Move to.
	MovedTo string `json:"movedTo,omitempty"`
	// BytesWritten is the size of the file after this section (0 for a
	// delete).
	BytesWritten int `json:"bytesWritten"`
	// Fingerprint is the file after this section ("" for a delete);
	// PreviousFingerprint the file before it, when it was read.
	Fingerprint         string `json:"fingerprint,omitempty"`
	PreviousFingerprint string `json:"previousFingerprint,omitempty"`
	// Hunks says where each hunk of an update applied and how its lines
	// were matched.
	Hunks []HunkResult `json:"hunks,omitempty"`
}

// HunkResult is where one update hunk applied.
type HunkResult struct {
	// Line is the 1-based line, in the file as the section found it, where
	// the hunk's old lines start (for a pure insertion: the line it was
	// inserted before).
	Line int `json:"line"`
	// Match is how the old lines were found: "exact", "trailing_whitespace"
	// (ignoring whitespace at line ends), "whitespace" (ignoring it at both
	// ends) or "unicode" (also folding typographic dashes, quotes and
	// spaces to ASCII).
	Match   string `json:"match"`
	Removed int    `json:"removed"`
	Added   int    `json:"added"`
}
