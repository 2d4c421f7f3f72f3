package transport

// Transport ceilings from the spec (§URL Transport Rules 2).
const (
	// MaxTarget is the largest request-target (path and query) accepted.
	MaxTarget = 12 << 10
	// MaxRaw bounds the raw= tail, both as written and once decoded.
	MaxRaw = 8 << 10
	// MaxWait is the upper bound of wait= (milliseconds); 0 is the lower.
	MaxWait = 1500
)
