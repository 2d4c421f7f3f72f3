package jsonw

import (
	"bytes"
	"encoding/json"
)

// Reflect appends v as encoding/json writes it with HTML escaping off,
// without the trailing newline: the reference the hand-written encoders
// match, and the way to encode anything that has none. On error dst is
// returned as it was.
func Reflect(dst []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
