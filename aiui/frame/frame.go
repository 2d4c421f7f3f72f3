package frame

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/hubdev/hub/hub/jsonw"
)

// Version is the protocol version every envelope carries.
const Version = 1

// MaxHeaderBytes bounds the JSON envelope. A hello's meta (tab, source,
// intent config) is small; anything larger is hostile or broken.
const MaxHeaderBytes = 64 << 10

// Envelope kinds.
const (
	KindHello = "hello"
	KindData  = "data"
)

// Envelope is the frame header.
type Envelope struct {
	V        int              `json:"v"`
	Kind     string           `json:"kind"`
	Format   string           `json:"format,omitempty"`
	Meta     *HelloMeta       `json:"meta,omitempty"`
	ThreadID string           `json:"threadId,omitempty"`
	Fin      bool             `json:"fin,omitempty"`
	Chunk    *ChunkDescriptor `json:"chunk,omitempty"`
}

// HelloMeta is the optional client context a hello carries.
type HelloMeta struct {
	Tab    *TabInfo        `json:"tab,omitempty"`
	Source *SourceInfo     `json:"source,omitempty"`
	Intent json.RawMessage `json:"intent,omitempty"`
}

// TabInfo identifies the browser tab a client page lives in. The numeric
// ids are correlation hints only.
type TabInfo struct {
	URL         string `json:"url,omitempty"`
	Title       string `json:"title,omitempty"`
	ChromeTabID *int64 `json:"chromeTabId,omitempty"`
	WindowID    *int64 `json:"windowId,omitempty"`
	TabIndex    *int64 `json:"tabIndex,omitempty"`
	TargetID    string `json:"targetId,omitempty"`
}

// SourceInfo names the app's source root.
type SourceInfo struct {
	Root string `json:"root,omitempty"`
}

// ChunkDescriptor tags an intent-v1 payload.
type ChunkDescriptor struct {
	Kind string `json:"kind"`
	ID   string `json:"id,omitempty"`
	Mime string `json:"mime,omitempty"`
	Seq  *int64 `json:"seq,omitempty"`
}

// Decode errors. They are values so callers can choose fatal vs non-fatal.
var (
	ErrShort       = errors.New("frame shorter than its 4-byte header length")
	ErrHeaderRange = errors.New("header length runs past the end of the frame")
	ErrHeaderSize  = fmt.Errorf("header longer than %d bytes", MaxHeaderBytes)
	ErrHeaderUTF8  = errors.New("header is not valid UTF-8")
	ErrHeaderShape = errors.New("header must be a JSON object")
)

// Decode splits a frame into its envelope and payload. The payload is a
// view into frame, not a copy: the caller must finish with it before the
// frame's buffer is reused.
func Decode(frame []byte) (Envelope, []byte, error) {
	var env Envelope
	if len(frame) < 4 {
		return env, nil, ErrShort
	}
	n := binary.BigEndian.Uint32(frame)
	if uint64(n) > uint64(len(frame)-4) {
		return env, nil, ErrHeaderRange
	}
	if n > MaxHeaderBytes {
		return env, nil, ErrHeaderSize
	}
	hdr := frame[4 : 4+n]
	if !utf8.Valid(hdr) {
		return env, nil, ErrHeaderUTF8
	}
	trimmed := bytes.TrimSpace(hdr)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return env, nil, ErrHeaderShape
	}
	if decodeFast(trimmed, &env) {
		return env, frame[4+n:], nil
	}
	env = Envelope{}
	if err := json.Unmarshal(hdr, &env); err != nil {
		return env, nil, fmt.Errorf("header is not a valid envelope: %v", err)
	}
	return env, frame[4+n:], nil
}

// Encode builds a frame from an envelope and payload.
func Encode(env Envelope, payload []byte) ([]byte, error) {
	hdr, err := json.Marshal(env)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 4+len(hdr)+len(payload))
	binary.BigEndian.PutUint32(out, uint32(len(hdr)))
	copy(out[4:], hdr)
	copy(out[4+len(hdr):], payload)
	return out, nil
}

// Response is the per-frame ack. Acks never carry a kind; out-of-band
// pushes always do.
type Response struct {
	OK       bool   `json:"ok"`
	ThreadID string `json:"threadId,omitempty"`
	Closed   bool   `json:"closed,omitempty"`
	Error    string `json:"error,omitempty"`
	Fatal    bool   `json:"fatal,omitempty"`
}

// AppendJSON appends r as encoding/json writes it (one ack per frame, so
// without reflection).
func (r Response) AppendJSON(dst []byte) []byte {
	dst = jsonw.Bool(append(dst, `{"ok":`...), r.OK)
	if r.ThreadID != "" {
		dst = jsonw.StringHTML(append(dst, `,"threadId":`...), r.ThreadID)
	}
	if r.Closed {
		dst = append(dst, `,"closed":true`...)
	}
	if r.Error != "" {
		dst = jsonw.StringHTML(append(dst, `,"error":`...), r.Error)
	}
	if r.Fatal {
		dst = append(dst, `,"fatal":true`...)
	}
	return append(dst, '}')
}
