// Package jsonstr handles the contents of JSON strings (the bytes between
// the quotes) as bytes: it validates them and measures what they decode
// to in one pass, encodes Go strings into them, and holds long ones in
// pooled chunks. The prompt path uses it to carry a client's
// already-encoded text into the prompt record without decoding it into a
// Go string and encoding it again.
package jsonstr
