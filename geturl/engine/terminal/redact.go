package terminal

import "bytes"

// redactor replaces every occurrence of the project's host path in a byte
// stream with "/project", so output never tells the agent where the project
// lives. When a write ends with the beginning of the root ("/ho" of
// "/home/u/app") it holds those bytes back until the next write (or flush)
// shows whether the occurrence completes, so one split between two reads is
// still replaced. A snapshot taken meanwhile lacks them: at most
// len(root)-1 bytes that end the output so far and look like the start of
// the root. An empty root (or "/") disables it. With fold (Windows, whose
// paths ignore case and take either separator) "c:/users/u/app" is an
// occurrence of C:\Users\u\app too.
type redactor struct {
	root    []byte
	virtual []byte
	pending []byte
	fold    bool
}

func newRedactor(root, virtual string, fold bool) *redactor {
	if root == "/" {
		root = ""
	}
	return &redactor{root: []byte(root), virtual: []byte(virtual), fold: fold}
}

// foldByte is c as fold compares it: ASCII lower case, "\" as "/".
func foldByte(c byte) byte {
	switch {
	case c == '\\':
		return '/'
	case c >= 'A' && c <= 'Z':
		return c + 'a' - 'A'
	}
	return c
}

// index is the first occurrence of the root in b, or -1.
func (r *redactor) index(b []byte) int {
	if !r.fold {
		return bytes.Index(b, r.root)
	}
	for i := 0; i+len(r.root) <= len(b); i++ {
		if r.startsRoot(b[i : i+len(r.root)]) {
			return i
		}
	}
	return -1
}

// startsRoot reports whether the root begins with b.
func (r *redactor) startsRoot(b []byte) bool {
	if !r.fold {
		return bytes.HasPrefix(r.root, b)
	}
	if len(b) > len(r.root) {
		return false
	}
	for i, c := range b {
		if foldByte(c) != foldByte(r.root[i]) {
			return false
		}
	}
	return true
}

// write appends the redacted part of p that is safe to emit to dst.
func (r *redactor) write(dst, p []byte) []byte {
	if len(r.root) == 0 {
		return append(dst, p...)
	}
	r.pending = append(r.pending, p...)
	keep := len(r.root) - 1
	i := 0
	for {
		k := r.index(r.pending[i:])
		if k < 0 {
			break
		}
		dst = append(dst, r.pending[i:i+k]...)
		dst = append(dst, r.virtual...)
		i += k + len(r.root)
	}
	// Hold back the longest tail that could begin an occurrence completed
	// by the next write; everything before it is final.
	cut := len(r.pending)
	for j := max(len(r.pending)-keep, i); j < len(r.pending); j++ {
		if r.startsRoot(r.pending[j:]) {
			cut = j
			break
		}
	}
	dst = append(dst, r.pending[i:cut]...)
	r.pending = append(r.pending[:0], r.pending[cut:]...)
	return dst
}

// flush emits what was held back (it cannot be the start of an occurrence
// any more: the stream ended).
func (r *redactor) flush(dst []byte) []byte {
	dst = append(dst, r.pending...)
	r.pending = r.pending[:0]
	return dst
}
