package companion

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// MaxBody bounds a /companion/ request body.
const MaxBody = 4 << 10

var errTooLarge = errors.New("body too large")

// decode is the strict decoder of a /companion/ request body: at most
// MaxBody bytes of UTF-8, one JSON object, no unknown or repeated field,
// nothing after it.
func decode(b []byte, v any) error {
	if len(b) > MaxBody {
		return fmt.Errorf("%w: more than %d bytes", errTooLarge, MaxBody)
	}
	if !utf8.Valid(b) {
		return errors.New("body is not UTF-8")
	}
	if err := checkObject(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("body: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("body: data after the JSON object")
	}
	return nil
}

// checkObject refuses what encoding/json lets through: a body that is not
// an object, a repeated key in any object (the last would win silently),
// a key in another case than ours.
func checkObject(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("body is not valid JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("body must be a JSON object")
	}
	return walkObject(dec, 1)
}

// maxDepth bounds nesting (the requests nest two levels).
const maxDepth = 4

// walkObject reads an object's members after its '{'.
func walkObject(dec *json.Decoder, depth int) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("body is not valid JSON: %v", err)
		}
		key, _ := tok.(string)
		if !plainKey(key) {
			// encoding/json matches names case-insensitively, with Unicode
			// folding ("ſeq" is seq): every field of ours is lower-case ASCII.
			return fmt.Errorf("body: unknown field %q", key)
		}
		if seen[key] {
			return fmt.Errorf("body: field %q repeated", key)
		}
		seen[key] = true
		if err := walkValue(dec, depth); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // '}'
		return fmt.Errorf("body is not valid JSON: %v", err)
	}
	return nil
}

// plainKey: 1-32 of a-z and '_'.
func plainKey(k string) bool {
	if k == "" || len(k) > 32 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; (c < 'a' || c > 'z') && c != '_' {
			return false
		}
	}
	return true
}

func walkValue(dec *json.Decoder, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("body is not valid JSON: %v", err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if depth >= maxDepth {
		return errors.New("body nests too deep")
	}
	switch d {
	case '{':
		return walkObject(dec, depth+1)
	case '[':
		for dec.More() {
			if err := walkValue(dec, depth+1); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil { // ']'
			return fmt.Errorf("body is not valid JSON: %v", err)
		}
	}
	return nil
}

// The request bodies.
type (
	pairBody struct {
		Name   string `json:"name"`
		Secret string `json:"secret"`
	}
	bindBody struct {
		Project      string `json:"project"`
		Conversation string `json:"conversation"`
	}
	heartbeatBody struct {
		Seq      int64           `json:"seq"`
		Bindings []heartbeatItem `json:"bindings"`
	}
	heartbeatItem struct {
		Binding    string `json:"binding"`
		Generation int64  `json:"generation"`
	}
	disconnectBody struct {
		Binding string `json:"binding"`
	}
)
