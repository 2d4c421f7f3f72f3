package intent

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/aiui/frame"
)

// TestRESTUploadHoldsNoCopy: a segment waiting for a slow transcription
// upstream is uploaded from the file stored on arrival, not from copies in
// memory (the audio and a multipart body built around it), so a turn of
// large segments costs no memory while its uploads are in flight; and the
// upstream still gets the segment's exact bytes.
func TestRESTUploadHoldsNoCopy(t *testing.T) {
	type upload struct {
		body     []byte
		filename string
		err      error
	}
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	// what the upstream received is handed over, never shared: the handler
	// runs on the server's goroutine
	uploaded := make(chan upload, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		var u upload
		defer func() { uploaded <- u }()
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			u.err = fmt.Errorf("form: %v", err)
			return
		}
		f, fh, err := r.FormFile("file")
		if err != nil {
			u.err = fmt.Errorf("file: %v", err)
			return
		}
		if u.body, err = io.ReadAll(f); err != nil {
			u.err = fmt.Errorf("reading the file part: %v", err)
			return
		}
		u.filename = fh.Filename
		w.Write([]byte(`{"text":"ok"}`))
	}))
	defer srv.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	h := &host{t: t, dir: t.TempDir()}
	d := testDeps(h, &OpenAI{BaseURL: srv.URL + "/v1", Key: "sk-test"})
	// fin waits for the upload whatever the machine's speed: the claim is
	// the upload's memory and bytes, not FinWait's bound
	d.FinWait = time.Hour
	c := newIntentConn(t, h, d, `{"transcriber":"openai"}`)
	audio := bytes.Repeat([]byte("RIFFwave"), 4<<20) // 32 MiB
	fr, _ := frame.Encode(frame.Envelope{V: 1, Kind: "data", ThreadID: "th",
		Chunk: &frame.ChunkDescriptor{Kind: "attachment", ID: "seg_1", Mime: "audio/wav"}}, audio)
	runtime.GC()
	var before, during runtime.MemStats
	runtime.ReadMemStats(&before)
	if r := c.Handle(true, fr); !r.OK {
		t.Fatalf("seg: %+v", r)
	}
	<-arrived // the upload is in flight and the upstream is not reading yet
	runtime.GC()
	runtime.ReadMemStats(&during)
	if grew := int64(during.HeapAlloc) - int64(before.HeapAlloc); grew > 8<<20 {
		t.Fatalf("the heap grew by %d MiB while a 32 MiB segment waits for the upstream", grew>>20)
	}
	close(release)
	send(t, c, nil, nil, true)
	u := <-uploaded
	if u.err != nil {
		t.Fatalf("upstream: %v", u.err)
	}
	if !bytes.Equal(u.body, audio) || u.filename != "seg_1.wav" {
		t.Fatalf("upstream got %d bytes as %q, want the segment's %d", len(u.body), u.filename, len(audio))
	}
	if len(h.prompts) != 1 || !strings.HasSuffix(h.prompts[0].Text, "ok") {
		t.Fatalf("prompts = %+v", h.prompts)
	}
	runtime.KeepAlive(fr)
}
