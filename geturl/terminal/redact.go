package terminal

import "bytes"

// redactor replaces every occurrence of the project's host path in a byte
// stream with "/project", so output never tells the agent where the project
// lives. It holds back the last len(root)-1 bytes of each write until the
// next one (or flush), so an occurrence split between two reads is still
// replaced. An empty root (or "/") disables it.
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
	// Bytes from cut on might begin an occurrence completed by the next
	// write; everything before it is final.
	cut := max(len(r.pending)-keep, i)
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
