package supervisor

import "strings"

// samePath compares executable paths as NTFS does: without case.
func samePath(a, b string) bool { return strings.EqualFold(a, b) }
