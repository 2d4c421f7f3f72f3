package bufpool

import "testing"

func TestGetCapacity(t *testing.T) {
	for _, n := range []int{0, 1, 4095, 4096, 4097, 5000, 1 << 16, 1<<16 + 1, MaxPooled, MaxPooled + 1, 1 << 20} {
		b := Get(n)
		if len(*b) != 0 || cap(*b) < n {
			t.Fatalf("Get(%d): len %d cap %d", n, len(*b), cap(*b))
		}
		*b = append(*b, "dirty"...)
		Put(b)
	}
}

// TestPutOddCapacity: a buffer grown by append to a capacity between two
// classes goes to the lower one, so Get never returns one that is too small.
func TestPutOddCapacity(t *testing.T) {
	for _, c := range []int{4096, 6000, 8191, 8192, 100_000, MaxPooled} {
		b := make([]byte, 3, c)
		Put(&b)
	}
	for range 100 {
		for _, n := range []int{4096, 8192, 65536, 131072} {
			b := Get(n)
			if cap(*b) < n || len(*b) != 0 {
				t.Fatalf("Get(%d): cap %d len %d", n, cap(*b), len(*b))
			}
			Put(b)
		}
	}
}

// TestGetFindsGrownBuffer: a buffer that outgrew its class comes back for
// the same request size instead of a new small one being allocated.
func TestGetFindsGrownBuffer(t *testing.T) {
	b := Get(8 << 10)
	*b = append((*b)[:0], make([]byte, 20<<10)...) // grows to a larger class
	grown := cap(*b)
	Put(b)
	if got := Get(8 << 10); cap(*got) != grown {
		t.Skipf("pool dropped the buffer (a GC ran): cap %d", cap(*got)) // sync.Pool may
	}
}
