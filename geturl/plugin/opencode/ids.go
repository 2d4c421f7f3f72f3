package opencode

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// idGen makes OpenCode-shaped ascending ids ("msg_" + 12 hex digits of
// ms*4096+counter + 14 base62 characters), the format OpenCode's own
// clients send. OpenCode orders a session's messages by id, so a
// client-chosen message id must sort after every earlier one; the
// timestamp prefix does that.
type idGen struct {
	now func() time.Time

	mu      sync.Mutex
	lastMs  int64
	counter int64
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func (g *idGen) next(prefix string) string {
	g.mu.Lock()
	ms := g.now().UnixMilli()
	if ms != g.lastMs {
		g.lastMs, g.counter = ms, 0
	}
	g.counter++
	v := uint64(ms)*4096 + uint64(g.counter)
	g.mu.Unlock()
	var b [6]byte
	for i := range b {
		b[i] = byte(v >> (40 - 8*i))
	}
	return prefix + "_" + hex.EncodeToString(b[:]) + randomBase62(14)
}

func randomBase62(n int) string {
	buf := make([]byte, n)
	out := make([]byte, 0, n)
	for len(out) < n {
		_, _ = rand.Read(buf)
		for _, c := range buf {
			// Rejection sampling keeps the alphabet uniform.
			if c < 248 && len(out) < n {
				out = append(out, base62[c%62])
			}
		}
	}
	return string(out)
}
