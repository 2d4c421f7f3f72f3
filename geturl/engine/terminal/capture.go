package terminal

import (
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// capture keeps a bounded view of a process's output: the first headCap
// bytes and the last tailCap bytes, counting everything in between. Its
// input has already been through the ANSI stripper and the redactor. It is
// safe for concurrent use: the reader goroutine writes while a caller may
// take a snapshot of a background process.
type capture struct {
	mu      sync.Mutex
	headCap int
	tailCap int
	head    []byte
	tail    []byte // ring of the last tailCap bytes after the head
	start   int    // index of the oldest byte in tail once it is full
	total   int64
}

func newCapture(limit int) *capture {
	h := limit / 2
	return &capture{headCap: h, tailCap: limit - h}
}

func (c *capture) write(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	if n := min(c.headCap-len(c.head), len(p)); n > 0 {
		c.head = append(c.head, p[:n]...)
		p = p[n:]
	}
	if c.tailCap == 0 || len(p) == 0 {
		return
	}
	if len(p) >= c.tailCap {
		c.tail = append(c.tail[:0], p[len(p)-c.tailCap:]...)
		c.start = 0
		return
	}
	if room := c.tailCap - len(c.tail); room > 0 {
		n := min(room, len(p))
		c.tail = append(c.tail, p[:n]...)
		p = p[n:]
	}
	for len(p) > 0 { // the ring is full: overwrite the oldest bytes
		n := copy(c.tail[c.start:], p)
		p = p[n:]
		c.start = (c.start + n) % c.tailCap
	}
}

// outputView is a bounded view of a stream of process output.
type outputView struct {
	// Text is valid UTF-8: the whole output, or when it was larger than
	// the capture limit its head and its tail joined by a marker line
	// "[… N bytes omitted …]".
	Text string
	// Bytes counts all the output (after escape sequences were removed).
	Bytes int64
	// Truncated reports that Text is not the whole output.
	Truncated bool
	// Omitted counts the bytes left out between head and tail.
	Omitted int64
}

// snapshot returns the current view. Head and tail are cut on UTF-8
// boundaries (a character split by a cut is counted as omitted), and any
// invalid byte left is replaced by U+FFFD.
func (c *capture) snapshot() outputView {
	c.mu.Lock()
	head := string(c.head)
	tail := make([]byte, 0, len(c.tail))
	tail = append(tail, c.tail[c.start:]...)
	tail = append(tail, c.tail[:c.start]...)
	total := c.total
	c.mu.Unlock()

	kept := int64(len(head) + len(tail))
	if kept >= total {
		// A snapshot of a running process may end inside a character.
		return outputView{Text: strings.ToValidUTF8(trimPartialEnd(head+string(tail)), "\uFFFD"), Bytes: total}
	}
	head = trimPartialEnd(head)
	t := trimPartialStart(string(tail))
	omitted := total - int64(len(head)+len(t))
	var b strings.Builder
	b.Grow(len(head) + len(t) + 48)
	b.WriteString(head)
	if head != "" && !strings.HasSuffix(head, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString("[… " + strconv.FormatInt(omitted, 10) + " bytes omitted …]\n")
	b.WriteString(t)
	return outputView{
		Text:      strings.ToValidUTF8(b.String(), "\uFFFD"),
		Bytes:     total,
		Truncated: true,
		Omitted:   omitted,
	}
}

// trimPartialEnd drops an incomplete UTF-8 sequence at the end of s.
func trimPartialEnd(s string) string {
	for i := 1; i <= utf8.UTFMax && i <= len(s); i++ {
		if utf8.RuneStart(s[len(s)-i]) {
			if !utf8.FullRuneInString(s[len(s)-i:]) {
				return s[:len(s)-i]
			}
			return s
		}
	}
	return s
}

// trimPartialStart drops continuation bytes at the start of s (the rest of
// a character whose first bytes were omitted): at most UTFMax-1 of them, as
// a valid character has no more.
func trimPartialStart(s string) string {
	i := 0
	for i < utf8.UTFMax-1 && i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
