package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// VirtualRoot is the name agents use for the project root.
const VirtualRoot = "/project"

// Scope is one project root, held as its canonical realpath. It is immutable
// and safe for concurrent use.
type Scope struct {
	root     string
	resolver Resolver
	rules    rules
	// final is the root as the OS names it from an open handle (see
	// finalRoot): what Scope.Open compares the opened file's path to.
	final string
}

// New returns the Scope of dir: dir is made absolute, every symlink in it is
// resolved, and the result must be a directory. The error of a bad root is
// for the operator (it names dir), never for an agent. Its paths are
// opened with the OS's Default resolver.
func New(dir string) (*Scope, error) { return NewWith(dir, Default()) }

// NewWith is New with the resolver Scope.Open uses (one of Resolvers).
func NewWith(dir string, r Resolver) (*Scope, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &os.PathError{Op: "scope", Path: dir, Err: ErrNotDir}
	}
	final, err := finalRoot(real)
	if err != nil {
		return nil, err
	}
	return &Scope{root: real, resolver: r, rules: hostRules(), final: final}, nil
}

// Root is the canonical host path of the project. It is for opening files
// and running processes, never for an agent-facing answer.
func (s *Scope) Root() string { return s.root }

// Contains reports whether host path p (absolute, clean) is the root or
// lies under it. It compares strings only; it does not follow symlinks.
func (s *Scope) Contains(p string) bool { return s.rules.within(s.root, p) }

// Virtual maps a host path inside the scope to its "/project/..." form. It
// returns "" for a path outside the scope, so a caller that forgets to check
// can never echo a host path.
func (s *Scope) Virtual(hostPath string) string {
	p := filepath.Clean(hostPath)
	if !s.rules.within(s.root, p) {
		return ""
	}
	return s.rules.virtual(s.root, p)
}

// Rel returns p relative to the root, '/'-separated on every OS ("." for
// the root itself), and whether p is inside the scope.
func (s *Scope) Rel(hostPath string) (string, bool) {
	p := filepath.Clean(hostPath)
	if !s.rules.within(s.root, p) {
		return "", false
	}
	return s.rules.rel(s.root, p), true
}

// Redact replaces every occurrence of the root's host path in text with
// VirtualRoot. Use it on messages that may embed an OS error. Only whole
// path prefixes are replaced: with root /src/app, "/src/app/x" becomes
// "/project/x" but "/src/apple" stays as it is.
func (s *Scope) Redact(text string) string {
	if s.root[len(s.root)-1] == filepath.Separator || !strings.Contains(text, s.root) {
		return text
	}
	var b strings.Builder
	for {
		i := strings.Index(text, s.root)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		end := i + len(s.root)
		b.WriteString(text[:i])
		if end == len(text) || !isNameByte(text[end]) {
			b.WriteString(VirtualRoot)
		} else {
			b.WriteString(s.root)
		}
		text = text[end:]
	}
}

// isNameByte reports bytes that can continue a file name (so a match of
// the root followed by one is a longer, different name).
func isNameByte(c byte) bool {
	return c != '/' && c != '\\' && c > ' ' && c != '"' && c != '\'' && c != ':' && c != ')'
}

// Display returns how to show an agent-supplied path back to the agent
// without resolving it: the virtual spelling when it lexically names
// something inside the root, otherwise the input itself with any occurrence
// of the root redacted. It never fails, so error reports can always use it.
func (s *Scope) Display(p string) string {
	host, inside, err := s.candidate(p)
	if err == nil && inside {
		return s.rules.virtual(s.root, host)
	}
	return s.Redact(strings.ToValidUTF8(strings.ReplaceAll(p, "\x00", `\0`), "\uFFFD"))
}

// Supported says whether this OS has the sandbox: nil on every OS hub
// builds for (unix and Windows).
func Supported() error { return nil }
