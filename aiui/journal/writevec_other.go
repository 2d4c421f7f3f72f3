//go:build !linux && !darwin

package journal

import "os"

// writeVecAt writes bufs one after another at off and returns the bytes
// written. It neither uses nor moves f's offset.
func writeVecAt(f *os.File, bufs [][]byte, off int64) (int64, error) {
	var total int64
	for _, b := range bufs {
		n, err := f.WriteAt(b, off+total)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
