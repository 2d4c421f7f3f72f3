package outline

import (
	"errors"
	"path"
	"strings"
)

// Bounds of one outline.
const (
	// MaxSourceBytes is how much of a file is scanned; the rest is not
	// outlined and the outline says Truncated.
	MaxSourceBytes = 2 << 20
	// MaxParseBytes is the largest source outlined in full: Go through
	// go/parser, JS/TS from a table of all its tokens. Both cost tens of
	// bytes per byte of source. A larger source (up to MaxSourceBytes) is
	// outlined by one streaming pass over its tokens, whose memory does
	// not grow with the file, and the outline says Scanned.
	MaxParseBytes = 256 << 10
	MaxImports    = 200
	MaxDecls      = 500
	// MaxNameBytes clips a name or module specifier.
	MaxNameBytes = 200
	// maxNesting bounds template/JSX nesting; deeper input is not scanned
	// further (and the outline says Truncated).
	maxNesting = 500
)

// Outline is the answer for one file.
type Outline struct {
	Language string   `json:"language"`
	Lines    int      `json:"lines"`
	Imports  []Import `json:"imports"`
	Decls    []Decl   `json:"declarations"`
	// Truncated is set when a bound cut the outline.
	Truncated bool `json:"truncated"`
	// ParseError is the first syntax error of a Go file outlined anyway.
	ParseError string `json:"parseError,omitempty"`
	// Scanned is set when the source was larger than MaxParseBytes and
	// was outlined by the streaming scan: the same declarations for
	// well-formed source, but no syntax check (no ParseError), and for
	// JS/TS a statement longer than the scan keeps is outlined from its
	// start.
	Scanned bool `json:"scanned,omitempty"`
}

// Import is one module dependency.
type Import struct {
	Line   int    `json:"line"`
	Module string `json:"module"`
	// Kind is "import" (static), "export" (re-export: export … from),
	// "require", or "dynamic" (import()).
	Kind string `json:"kind"`
	// Name is a Go import's alias.
	Name string `json:"name,omitempty"`
}

// Decl is one named declaration.
type Decl struct {
	Line int `json:"line"`
	// EndLine is where the declaration ends, when known.
	EndLine int `json:"endLine,omitempty"`
	// Kind: function, class, interface, type, enum, namespace, const,
	// let, var, method, default (an anonymous export default), export (a
	// CommonJS exports.x); for Go: func, method, type, const, var.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Parent is the class of a method, or the receiver type of a Go
	// method.
	Parent   string `json:"parent,omitempty"`
	Exported bool   `json:"exported,omitempty"`
	Default  bool   `json:"default,omitempty"`
	// Detail says more about the kind: "arrow" or "async" for functions,
	// "struct"/"interface"/"alias" for Go types, "getter"/"setter"/
	// "static" for methods.
	Detail string `json:"detail,omitempty"`
}

// ErrUnsupported is returned for a file that is neither JS/TS nor Go.
var ErrUnsupported = errors.New("outline supports JavaScript, TypeScript and Go files")

// File outlines src by the extension of name.
func File(name string, src []byte) (Outline, error) {
	switch ext := strings.ToLower(path.Ext(name)); ext {
	case ".go":
		return Go(src)
	case ".ts", ".mts", ".cts":
		return JS(src, Options{TypeScript: true}), nil
	case ".tsx":
		return JS(src, Options{TypeScript: true, JSX: true}), nil
	case ".js", ".jsx", ".mjs", ".cjs":
		return JS(src, Options{JSX: true}), nil
	}
	return Outline{}, ErrUnsupported
}

// clip bounds a name at a UTF-8 boundary.
func clip(s string) string {
	if len(s) <= MaxNameBytes {
		return s
	}
	n := MaxNameBytes
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

func countLines(src []byte) int {
	n := 0
	for _, c := range src {
		if c == '\n' {
			n++
		}
	}
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return n
}
