package journal

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/hubdev/hub/aiui/jsonstr"
)

// Record is one delivered prompt as the record keeps it and the shell face
// prints it: text exactly as delivered, its meta (kind "prompt" and the
// tab/source attributes), and when.
type Record struct {
	// ID is unique across backends, so two backends sharing the record
	// file address each other's prompts.
	ID          string            `json:"id"`
	Seq         int64             `json:"seq"`
	At          time.Time         `json:"at"`
	Text        string            `json:"text"`
	Meta        map[string]string `json:"meta"`
	Root        string            `json:"root,omitempty"`
	DeliveredTo string            `json:"deliveredTo,omitempty"`
}

// textOpen starts every prompt line this package writes: the text first,
// so a scan can validate it in pieces.
const textOpen = `{"text":"`

// promptTail is the rest of a prompt line after the text's contents.
func promptTail(dst []byte, id string, seq int64, at time.Time, meta map[string]string, root string) []byte {
	dst = append(dst, `","id":`...)
	dst = jsonstr.Quote(dst, id)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendInt(dst, seq, 10)
	dst = append(dst, `,"at":"`...)
	dst = at.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","meta":`...)
	m, _ := json.Marshal(meta)
	if meta == nil {
		m = []byte("{}")
	}
	dst = append(dst, m...)
	if root != "" {
		dst = append(dst, `,"root":`...)
		dst = jsonstr.Quote(dst, root)
	}
	return append(dst, "}\n"...)
}

// toLine records who took prompt id ("" = pending again).
func toLine(dst []byte, id, to string) []byte {
	dst = append(dst, `{"ev":"to","id":`...)
	dst = jsonstr.Quote(dst, id)
	dst = append(dst, `,"to":`...)
	dst = jsonstr.Quote(dst, to)
	return append(dst, "}\n"...)
}

// baseLine starts a head compacted while a previous file existed: it
// holds every live line of both, so the previous file is stale.
const baseLine = `{"ev":"base"}` + "\n"

// dropLine records that prompt id fell out of the record's bounds.
func dropLine(dst []byte, id string) []byte {
	dst = append(dst, `{"ev":"drop","id":`...)
	dst = jsonstr.Quote(dst, id)
	return append(dst, "}\n"...)
}
