//go:build unix

package sandbox

// pathRulesSupported: the scope's rules (resolve.go) are written for
// slash-separated paths with one root, which every unix has.
func pathRulesSupported() error { return nil }
