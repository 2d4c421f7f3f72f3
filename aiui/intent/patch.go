package intent

import (
	"errors"
	"fmt"
	"strings"
)

// MaxPatchBytes bounds a V4A patch; corrections are one-line edits.
const MaxPatchBytes = 1 << 20

// ApplyPatch applies a V4A patch ("*** Begin Patch", "*** Update File: …",
// "@@" hunks of ' ' context, '-' removed and '+' added lines, "*** End
// Patch") to doc, a document of newline-separated lines. It fails, rather
// than guessing, when a hunk's context does not match.
func ApplyPatch(doc, patch string) (string, error) {
	if len(patch) > MaxPatchBytes {
		return "", errors.New("patch too large")
	}
	lines := strings.Split(strings.ReplaceAll(patch, "\r\n", "\n"), "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != "*** Begin Patch" || strings.TrimSpace(lines[len(lines)-1]) != "*** End Patch" {
		return "", errors.New("not a V4A patch: missing *** Begin Patch / *** End Patch")
	}
	body := lines[1 : len(lines)-1]
	if len(body) > 0 && strings.HasPrefix(body[0], "*** Update File:") {
		body = body[1:]
	}
	type hunk struct{ old, new []string }
	var hunks []hunk
	cur := -1
	for _, l := range body {
		switch {
		case strings.HasPrefix(l, "@@"):
			hunks = append(hunks, hunk{})
			cur = len(hunks) - 1
		case strings.HasPrefix(l, "*** "):
			return "", fmt.Errorf("unsupported patch directive %q", l)
		default:
			if cur < 0 {
				hunks = append(hunks, hunk{})
				cur = 0
			}
			h := &hunks[cur]
			if l == "" {
				l = " "
			}
			switch l[0] {
			case ' ':
				h.old = append(h.old, l[1:])
				h.new = append(h.new, l[1:])
			case '-':
				h.old = append(h.old, l[1:])
			case '+':
				h.new = append(h.new, l[1:])
			default:
				return "", fmt.Errorf("bad patch line %q", l)
			}
		}
	}
	if len(hunks) == 0 {
		return "", errors.New("patch has no hunks")
	}
	docLines := strings.Split(doc, "\n")
	start := 0
	for _, h := range hunks {
		if len(h.old) == 0 {
			return "", errors.New("hunk has no context or removed lines")
		}
		at := find(docLines, h.old, start)
		if at < 0 {
			return "", errors.New("patch does not apply: context not found")
		}
		next := append(append(append([]string{}, docLines[:at]...), h.new...), docLines[at+len(h.old):]...)
		docLines = next
		start = at + len(h.new)
	}
	return strings.Join(docLines, "\n"), nil
}

func find(doc, want []string, from int) int {
	for i := from; i+len(want) <= len(doc); i++ {
		ok := true
		for j := range want {
			if doc[i+j] != want[j] {
				ok = false
				break
			}
		}
		if ok {
			return i
		}
	}
	return -1
}
