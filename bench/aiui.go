package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// aiuiFrame is one channel frame: a 4-byte big-endian header length, the
// JSON header, the payload.
func aiuiFrame(hdr map[string]any, payload []byte) []byte {
	h, _ := json.Marshal(hdr)
	out := make([]byte, 4, 4+len(h)+len(payload))
	binary.BigEndian.PutUint32(out, uint32(len(h)))
	return append(append(out, h...), payload...)
}

// aiuiPrompt is a frameBytes-long `{"text":…}` payload of prose with an
// escaped newline every line, as a dictated prompt has them.
func aiuiPrompt(frameBytes int) []byte {
	const line = `The quick brown fox jumps over the lazy dog; make the baseline amber.\n`
	n := frameBytes - len(`{"text":""}`)
	text := strings.Repeat(line, n/len(line)+1)[:n]
	for strings.HasSuffix(text, `\`) { // never end on a cut escape
		text = text[:len(text)-1] + "."
	}
	return []byte(`{"text":"` + text + `"}`)
}

const (
	aiuiFrameBytes      = 64 << 10
	aiuiFramesPerThread = 4
)

func aiuiIngest() *Load {
	l := &Load{Name: "aiui prompt ingest (64 KiB frames)", Adapter: "aiui", Section: "port: 0\n", Node: "aiui.js", Bare: true, Unit: "MiB"}
	l.Connect = func(ctx context.Context, srv *Server, callers int) (*Clients, error) {
		url := "ws://127.0.0.1:" + strconv.Itoa(l.port(srv)) + "/ws"
		payload := aiuiPrompt(aiuiFrameBytes)
		var conns []*rawWS
		closeAll := func() {
			for _, c := range conns {
				c.Close()
			}
		}
		c := &Clients{Close: closeAll}
		for i := range callers {
			w, err := dialRawWS(url, "")
			if err != nil {
				closeAll()
				return nil, err
			}
			conns = append(conns, w)
			if err := w.Write(w.maskedFrame(2, aiuiFrame(map[string]any{"v": 1, "kind": "hello", "format": "text-concat"}, nil))); err != nil {
				closeAll()
				return nil, err
			}
			if m, err := w.Next(10 * time.Second); err != nil || !bytes.HasPrefix(m, []byte(`{"ok":true`)) {
				closeAll()
				return nil, fmt.Errorf("aiui hello: %q %v", m, err)
			}
			// A prompt's frames, built and masked once: an op writes its
			// thread's id into them (the id keeps its width) and sends them.
			frames := make([][]byte, aiuiFramesPerThread)
			idAt := make([]int, aiuiFramesPerThread)
			for k := range frames {
				hdr := map[string]any{"v": 1, "kind": "data", "threadId": aiuiThreadID(i, 0)}
				if k == aiuiFramesPerThread-1 {
					hdr["fin"] = true
				}
				f := aiuiFrame(hdr, payload)
				idAt[k] = bytes.Index(f, []byte(aiuiThreadID(i, 0)))
				frames[k] = w.maskedFrame(2, f)
			}
			thread := 0
			var id []byte
			c.Ops = append(c.Ops, func() (int64, error) {
				// One prompt: a thread of frames sent back to back (within
				// the spec's window of 8 un-acked), then every ack.
				thread++
				id = append(id[:0], aiuiThreadID(i, thread)...)
				for k, f := range frames {
					w.patch(f, idAt[k], id)
					if err := w.Write(f); err != nil {
						return 0, err
					}
				}
				for range aiuiFramesPerThread {
					m, err := w.Next(20 * time.Second)
					if err != nil {
						return 0, err
					}
					if !bytes.HasPrefix(m, []byte(`{"ok":true`)) {
						return 0, fmt.Errorf("aiui: frame refused: %.200s", m)
					}
				}
				return int64(aiuiFramesPerThread * len(payload)), nil
			})
		}
		return c, nil
	}
	return l
}

// aiuiThreadID is caller i's thread n's id, always 13 bytes long (n below
// a billion).
func aiuiThreadID(i, n int) string { return fmt.Sprintf("c%02dt%09d", i, n) }
