package files

// fileStat is what load needs to know of an open file (fstat).
type fileStat struct {
	kind  statKind
	size  int64
	mtime int64 // Unix nanoseconds
}

type statKind uint8

const (
	statOther statKind = iota // neither: a FIFO, a device, a socket
	statDir
	statRegular
)
