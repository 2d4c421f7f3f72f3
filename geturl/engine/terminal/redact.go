package terminal

import "bytes"

// redactor replaces every occurrence of the project's host path in a byte
// stream with "/project", so output never tells the agent where the project
// lives. When a write ends with the beginning of the root ("/ho" of
// "/home/u/app") it holds those bytes back until the next write (or flush)
// shows whether the occurrence completes, so one split between two reads is
// still replaced. A snapshot taken meanwhile lacks them: at most
// len(root)-1 bytes that end the output so far and look like the start of
// the root. An empty root (or "/") disables it.
type redactor struct {
	root    []byte
	virtual []byte
	pending []byte
}

func newRedactor(root, virtual string) *redactor {
	if root == "/" {
		root = ""
	}
	return &redactor{root: []byte(root), virtual: []byte(virtual)}
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
		k := bytes.Index(r.pending[i:], r.root)
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
		if r.pending[j] == r.root[0] && bytes.HasPrefix(r.root, r.pending[j:]) {
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
