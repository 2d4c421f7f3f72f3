package frame

import (
	"encoding/json"
	"fmt"
)

// Codec turns payload bytes into the value a processor sees and back.
type Codec interface {
	Name() string
	Decode(b []byte) (any, error)
	Encode(v any) ([]byte, error)
}

// JSON is the JSON codec: an empty payload decodes to nil (so a bare fin
// carries no bytes) and nil encodes to null. Decoded values are
// json.RawMessage copies, so processors unmarshal into their own types.
var JSON Codec = jsonCodec{}

// Raw is the identity codec: the payload is its bytes (a view, not a copy).
var Raw Codec = rawCodec{}

type jsonCodec struct{}

func (jsonCodec) Name() string { return "json" }

func (jsonCodec) Decode(b []byte) (any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("payload is not valid JSON")
	}
	return json.RawMessage(append([]byte(nil), b...)), nil
}

func (jsonCodec) Encode(v any) ([]byte, error) {
	if v == nil {
		return []byte("null"), nil
	}
	return json.Marshal(v)
}

type rawCodec struct{}

func (rawCodec) Name() string { return "raw" }

func (rawCodec) Decode(b []byte) (any, error) { return b, nil }

func (rawCodec) Encode(v any) ([]byte, error) {
	switch b := v.(type) {
	case nil:
		return nil, nil
	case []byte:
		return b, nil
	}
	return nil, fmt.Errorf("raw codec encodes []byte, got %T", v)
}
