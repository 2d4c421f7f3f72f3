package session

import (
	"crypto/rand"
	"fmt"
)

// TokenLen is the length of a capability token: 8 base62 characters, about
// 47.6 bits.
const TokenLen = 8

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// newToken returns TokenLen characters drawn uniformly from base62 with
// crypto/rand. Bytes ≥ 248 (the largest multiple of 62 that fits a byte)
// are rejected instead of reduced modulo 62, which would favour the first
// eight characters.
func newToken() string {
	out := make([]byte, 0, TokenLen)
	var buf [16]byte
	for len(out) < TokenLen {
		if _, err := rand.Read(buf[:]); err != nil {
			panic(fmt.Sprintf("crypto/rand: %v", err)) // never happens on Linux
		}
		for _, b := range buf {
			if b >= 248 {
				continue
			}
			out = append(out, base62[b%62])
			if len(out) == TokenLen {
				break
			}
		}
	}
	return string(out)
}
