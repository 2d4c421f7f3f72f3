package journal

// advance drops the first n bytes from bufs (what a short vectored write
// wrote), keeping the rest of a piece cut short, and the empty pieces
// after them. It reslices bufs[0] in place.
func advance(bufs [][]byte, n int) [][]byte {
	for n > 0 && len(bufs) > 0 {
		if n < len(bufs[0]) {
			bufs[0] = bufs[0][n:]
			break
		}
		n -= len(bufs[0])
		bufs = bufs[1:]
	}
	for len(bufs) > 0 && len(bufs[0]) == 0 {
		bufs = bufs[1:]
	}
	return bufs
}
