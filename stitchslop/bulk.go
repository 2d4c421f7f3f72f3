package stitchslop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hubdev/hub/hub/mcpserver"
)

// Bulk stays out of the model's context (issue 28): a data URL over 2 KB,
// or any other string over 100,000 characters, left in a reply the agent
// reads becomes a note saying what it was and how to save it. The
// control plane's POST /call stays verbatim (§4.2); the shell's `call`
// keeps it with --raw.
const (
	bulkDataURL = 2 << 10
	bulkText    = 100_000
)

// How the note tells an agent to get the bulk it replaces.
const (
	bulkHowMCP   = "save it with call_to_files (it writes the reply's files into a directory)"
	bulkHowShell = "save it with --save DIR (or print it with --raw)"
)

// isBulk reports whether a string value is bulk, and the note for it.
func bulkNote(s, how string) (string, bool) {
	if strings.HasPrefix(s, "data:") && len(s) > bulkDataURL {
		mime, data, ok := mcpserver.ParseDataURL(s)
		if !ok {
			return fmt.Sprintf("[left out: a data URL of %d characters; %s]", len(s), how), true
		}
		return fmt.Sprintf("[left out: %s, %s as a data URL; %s]", mime, sizeText(len(data)), how), true
	}
	if len(s) > bulkText && utf8.RuneCountInString(s) > bulkText {
		return fmt.Sprintf("[left out: %d characters of text; %s]", utf8.RuneCountInString(s), how), true
	}
	return "", false
}

func sizeText(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}

// leaveOut replaces bulk strings anywhere in v; it reports whether it did.
func leaveOut(v any, how string) (any, bool) {
	switch x := v.(type) {
	case string:
		if note, ok := bulkNote(x, how); ok {
			return note, true
		}
	case map[string]any:
		changed := false
		for k, c := range x {
			if nc, ok := leaveOut(c, how); ok {
				x[k], changed = nc, true
			}
		}
		return x, changed
	case []any:
		changed := false
		for i, c := range x {
			if nc, ok := leaveOut(c, how); ok {
				x[i], changed = nc, true
			}
		}
		return x, changed
	}
	return v, false
}

// leaveOutRaw is raw with its bulk left out; raw itself when it holds
// none (a value no longer than a data URL may be holds none).
func leaveOutRaw(raw json.RawMessage, how string) json.RawMessage {
	if len(raw) <= bulkDataURL {
		return raw
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return raw
	}
	v, changed := leaveOut(v, how)
	if !changed {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

// leaveOutBulk is the envelope with its bulk left out (for the shell's
// output): an envelope that is not a JSON object is left as it is.
func leaveOutBulk(env []byte, how string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(env, &m) != nil || m == nil {
		return env
	}
	changed := false
	for k, raw := range m {
		if out := leaveOutRaw(raw, how); len(out) != len(raw) || !bytes.Equal(out, raw) {
			m[k], changed = out, true
		}
	}
	if !changed {
		return env
	}
	out, err := json.Marshal(m)
	if err != nil {
		return env
	}
	return out
}
