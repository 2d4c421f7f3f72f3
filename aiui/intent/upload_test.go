package intent

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/hubdev/hub/aiui/frame"
)

// TestRESTUploadHoldsNoCopy: a segment waiting for a slow transcription
// upstream is uploaded from the file stored on arrival, not from copies in
// memory (the audio and a multipart body built around it), so a turn of
// large segments costs no memory while its uploads are in flight; and the
// upstream still gets the segment's exact bytes.
func TestRESTUploadHoldsNoCopy(t *testing.T) {
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	var got []byte
	var filename string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			t.Errorf("form: %v", err)
			return
		}
		f, fh, err := r.FormFile("file")
		if err != nil {
			t.Errorf("file: %v", err)
			return
		}
		got, _ = io.ReadAll(f)
		filename = fh.Filename
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
	c, h := setup(t, `{"transcriber":"openai"}`, &OpenAI{BaseURL: srv.URL + "/v1", Key: "sk-test"})
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
	if !bytes.Equal(got, audio) || filename != "seg_1.wav" {
		t.Fatalf("upstream got %d bytes as %q, want the segment's %d", len(got), filename, len(audio))
	}
	if len(h.prompts) != 1 || !strings.HasSuffix(h.prompts[0].Text, "ok") {
		t.Fatalf("prompts = %+v", h.prompts)
	}
	runtime.KeepAlive(fr)
}
