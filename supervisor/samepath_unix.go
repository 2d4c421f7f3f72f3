//go:build unix

package supervisor

// samePath compares executable paths as the file system does.
func samePath(a, b string) bool { return a == b }
