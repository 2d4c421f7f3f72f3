// Package bufpool recycles the byte buffers a request needs only while it
// is served (a file's bytes before they become the answer's string, the
// encoded answer before it is written), so each request does not hand the
// garbage collector several kilobytes it could have reused.
package bufpool

import (
	"math/bits"
	"sync"
)

// Buffers are pooled in power-of-two classes from 1<<minShift to
// 1<<maxShift bytes; larger ones are allocated and dropped, so one huge
// request cannot pin its memory in the pool.
const (
	minShift = 12 // 4 KiB
	maxShift = 18 // 256 KiB
)

// MaxPooled is the largest capacity that is pooled.
const MaxPooled = 1 << maxShift

var pools [maxShift - minShift + 1]sync.Pool

// Get returns an empty buffer with capacity at least n.
func Get(n int) *[]byte {
	if n > MaxPooled {
		b := make([]byte, 0, n)
		return &b
	}
	c := class(n)
	// A buffer that grew past its first class is put back in a larger one:
	// look one and two classes up before allocating, or a caller whose data
	// outgrew its first guess would allocate (and then grow) every time.
	for k := c; k < min(c+3, len(pools)); k++ {
		if b, ok := pools[k].Get().(*[]byte); ok {
			return b
		}
	}
	b := make([]byte, 0, 1<<(c+minShift))
	return &b
}

// Put returns b to the pool. The caller must not use *b (or anything sliced
// from it) afterwards. A buffer that grew past MaxPooled is dropped.
func Put(b *[]byte) {
	c := cap(*b)
	if c < 1<<minShift || c > MaxPooled {
		return
	}
	*b = (*b)[:0]
	// The largest class the capacity fully covers, so Get's promise holds
	// for a buffer that append grew to an odd size.
	pools[bits.Len(uint(c))-1-minShift].Put(b)
}

// class is the smallest class holding n bytes.
func class(n int) int {
	if n <= 1<<minShift {
		return 0
	}
	return bits.Len(uint(n-1)) - minShift
}
