package filechange

import (
	"strings"
)

// Op is what one file section of a patch does.
type Op string

// File section operations.
const (
	OpAdd    Op = "add"
	OpDelete Op = "delete"
	OpUpdate Op = "update"
)

// Patch is a parsed apply_patch text.
type Patch struct {
	Files []FilePatch `json:"files"`
}

// FilePatch is one "*** Add File:", "*** Delete File:" or
// "*** Update File:" section.
type FilePatch struct {
	Op   Op     `json:"op"`
	Path string `json:"path"`
	// MoveTo is the "*** Move to:" destination of an update.
	MoveTo string `json:"moveTo,omitempty"`
	// Content is the exact bytes of an added file.
	Content string `json:"content,omitempty"`
	// Hunks are an update's changes, in file order.
	Hunks []Hunk `json:"hunks,omitempty"`
	// Line is the 1-based line of the section header in the patch text.
	Line int `json:"line"`
}

// Hunk is one change of an update: a run of context, removed and added
// lines, optionally narrowed by "@@ <line>" headers.
type Hunk struct {
	// Context are the texts of the hunk's "@@ " headers, outermost first:
	// each must match a whole line below the previous one, and the hunk's
	// lines are looked for below the last.
	Context []string `json:"context,omitempty"`
	// Lines are the hunk's lines, each starting with ' ' (context), '-'
	// (removed) or '+' (added), without a line terminator.
	Lines []string `json:"lines"`
	// EndOfFile: "*** End of File" anchors the old lines at the end of the
	// file.
	EndOfFile bool `json:"endOfFile,omitempty"`
	// NoNewlineAtEnd: "\ No newline at end of file" after the hunk's last
	// new-side line; the file then ends without a final newline.
	NoNewlineAtEnd bool `json:"noNewlineAtEnd,omitempty"`
	// Line is the 1-based line of the hunk's first header (or first line).
	Line int `json:"line"`
}

// Old returns the lines the hunk expects in the file (context and removed).
func (h *Hunk) Old() []string { return h.side('-') }

// New returns the lines the hunk leaves in their place (context and added).
func (h *Hunk) New() []string { return h.side('+') }

func (h *Hunk) side(kind byte) []string {
	var out []string
	for _, l := range h.Lines {
		if l[0] == ' ' || l[0] == kind {
			out = append(out, l[1:])
		}
	}
	return out
}

// Patch markers.
const (
	markBegin     = "*** Begin Patch"
	markEnd       = "*** End Patch"
	markAdd       = "*** Add File:"
	markDelete    = "*** Delete File:"
	markUpdate    = "*** Update File:"
	markMove      = "*** Move to:"
	markEOF       = "*** End of File"
	markNoNewline = `\ No newline at end of file`
)

// Format writes p in the canonical apply_patch form. Parsing the result
// gives p back (line numbers aside) for any p that ParsePatch returned.
func (p *Patch) Format() string {
	var b strings.Builder
	b.WriteString(markBegin + "\n")
	for _, f := range p.Files {
		switch f.Op {
		case OpAdd:
			b.WriteString(markAdd + " " + f.Path + "\n")
			c := f.Content
			for c != "" {
				i := strings.IndexByte(c, '\n')
				if i < 0 {
					b.WriteString("+" + c + "\n" + markNoNewline + "\n")
					break
				}
				b.WriteString("+" + c[:i+1])
				c = c[i+1:]
			}
		case OpDelete:
			b.WriteString(markDelete + " " + f.Path + "\n")
		case OpUpdate:
			b.WriteString(markUpdate + " " + f.Path + "\n")
			if f.MoveTo != "" {
				b.WriteString(markMove + " " + f.MoveTo + "\n")
			}
			for _, h := range f.Hunks {
				if len(h.Context) == 0 {
					b.WriteString("@@\n")
				}
				for _, c := range h.Context {
					b.WriteString("@@ " + c + "\n")
				}
				for _, l := range h.Lines {
					b.WriteString(l + "\n")
				}
				if h.NoNewlineAtEnd {
					b.WriteString(markNoNewline + "\n")
				}
				if h.EndOfFile {
					b.WriteString(markEOF + "\n")
				}
			}
		}
	}
	b.WriteString(markEnd + "\n")
	return b.String()
}
