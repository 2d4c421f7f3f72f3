// Package jsonstr handles the contents of JSON strings (the bytes between
// the quotes) as bytes: it validates them and measures what they decode
// to in one pass (plain text and one-letter escapes sixteen bytes a step,
// in SSE2 assembly on amd64), encodes Go strings into them, decodes them,
// and holds long ones in reused 64 KiB chunks. The prompt path uses it to
// carry a client's already-encoded text into the prompt record without
// decoding it into a Go string and encoding it again.
package jsonstr
