package mcpserver

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// A Namer maps a page tool's own name to the name it is registered under.
// The Forwarder keeps the mapping both ways and resolves clashes.
type Namer func(original string) string

// Identity registers page tools under their own names.
func Identity(name string) string { return name }

// MaxPortableName is the longest tool name every MCP client accepts: some
// (Anthropic's API among them) require ^[a-zA-Z0-9_-]{1,64}$.
const MaxPortableName = 64

// Prefix namespaces page tools for a server that serves several bridges:
// prefix + the name with every character outside [a-zA-Z0-9_-] (a dot,
// say) turned into '_', shortened with a hash when it would pass
// MaxPortableName. prefix itself must be portable.
func Prefix(prefix string) Namer {
	return func(original string) string {
		var b strings.Builder
		b.WriteString(prefix)
		for _, r := range original {
			if portableRune(r) {
				b.WriteRune(r)
			} else {
				b.WriteByte('_')
			}
		}
		name := b.String()
		if len(name) > MaxPortableName {
			return hashedName(name, original)
		}
		return name
	}
}

func portableRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// hashedName makes name distinct by a hash of the original name, within
// MaxPortableName: deterministic, so the same page gets the same names on
// every sync and in every process.
func hashedName(name, original string) string {
	h := fnv.New32a()
	h.Write([]byte(original))
	suffix := fmt.Sprintf("_%08x", h.Sum32())
	if len(name) > MaxPortableName-len(suffix) {
		name = name[:MaxPortableName-len(suffix)]
	}
	return name + suffix
}

// validToolName is the SDK's tool-name grammar (MCP 2025-11-25): 1–128 of
// [a-zA-Z0-9_.-]. The SDK only logs a name outside it; we refuse it.
func validToolName(name string) bool {
	if name == "" || len(name) > 128 {
		return false
	}
	for _, r := range name {
		if !portableRune(r) && r != '.' {
			return false
		}
	}
	return true
}
