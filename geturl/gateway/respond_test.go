package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hubdev/hub/geturl/engine/replay"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// rangeFallback is the object appendRangeFallback writes, encoded the
// reflective way as the reference.
type rangeFallback struct {
	ID    string `json:"id"`
	Bytes int    `json:"bytes"`
	First string `json:"first"`
}

// TestAppendRangeFallback: the hand-built prefix is what encoding the
// object with the URL from transport.URL gives, for real store ids.
func TestAppendRangeFallback(t *testing.T) {
	s := replay.New(nil)
	for _, base := range []string{"http://127.0.0.1:47432/v0/AbCd1234", "https://abc.trycloudflare.com/v0/Zz9Yy8Xx"} {
		c := &route.Call{Bases: route.Bases{Read: base}, On: route.ReadBase}
		for range 200 {
			id := s.Put(replay.ReadLevel, []byte("{}"))
			if transport.Encode(id) != id {
				t.Fatalf("id %q is not URL-plain", id)
			}
			ref, err := transport.Marshal(rangeFallback{ID: id, Bytes: 4711,
				First: c.URL("/z", new(transport.Query).Add("id", id).Add("part", "0"))})
			if err != nil {
				t.Fatal(err)
			}
			want := `{"rangeFallback":` + string(ref)
			if got := string(appendRangeFallback(nil, base, id, 4711)); got != want {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		}
	}
}

// TestConcurrentAnswersKeepTheirBytes: answers are built in pooled buffers
// that go back to the pool once written; concurrent reads of different
// files must each get their own file, and each stored copy must replay
// exactly what was sent.
func TestConcurrentAnswersKeepTheirBytes(t *testing.T) {
	dir := t.TempDir()
	for i := range 8 {
		body := strings.Repeat(fmt.Sprintf("file %d line\n", i), 250+300*i)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), []byte(body), 0o644)
	}
	e := newEnv(t)
	s := newSession(t, dir, route.Permissions{}, "A")
	e.table.Add(s)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			want := strings.Repeat(fmt.Sprintf("file %d line\n", i), 250+300*i)
			for range 20 {
				w := &recordingWriter{h: http.Header{}}
				e.gw.ServeHTTP(w, httptestRequest(e, fmt.Sprintf("/v0/%s/r?path=f%d.txt", s.Token(route.CapRead), i)))
				var a struct {
					RangeFallback struct{ ID string } `json:"rangeFallback"`
					Files         []struct{ Content string }
				}
				if err := json.Unmarshal(w.body.Bytes(), &a); err != nil || len(a.Files) != 1 {
					t.Errorf("file %d: %v", i, err)
					return
				}
				if !strings.HasPrefix(want, a.Files[0].Content) || len(a.Files[0].Content) < 1000 {
					t.Errorf("file %d: got another file's content", i)
					return
				}
				var stored []byte
				for part := 0; ; part++ {
					r, err := s.store.Part(a.RangeFallback.ID, part, replay.ReadLevel)
					if err != nil {
						t.Error(err)
						return
					}
					stored = append(stored, r.Chunk...)
					if !r.HasMore {
						break
					}
				}
				if !strings.HasSuffix(w.body.String(), string(stored[1:])) {
					t.Errorf("file %d: the stored answer differs from the one sent", i)
					return
				}
			}
		})
	}
	wg.Wait()
}

type recordingWriter struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (d *recordingWriter) Header() http.Header         { return d.h }
func (d *recordingWriter) Write(p []byte) (int, error) { return d.body.Write(p) }
func (d *recordingWriter) WriteHeader(s int)           { d.status = s }

// TestRangeFallbackLongOrigin: a public origin too long for the room left
// in front of the answer still gets its exact rangeFallback (composed in a
// copy instead of in place), and the same bytes as a short one otherwise.
func TestRangeFallbackLongOrigin(t *testing.T) {
	dir := t.TempDir()
	content := strings.Repeat("line of text\n", 400)
	os.WriteFile(filepath.Join(dir, "big.txt"), []byte(content), 0o644)
	e := newEnv(t)
	s := newSession(t, dir, route.Permissions{}, "A")
	e.table.Add(s)
	for _, host := range []string{"abc.trycloudflare.com", strings.Repeat("a", 200) + ".trycloudflare.com"} {
		e.publicOrigin = "https://" + host
		r := e.get("/v0/"+s.Token(route.CapRead)+"/r?path=big.txt", host)
		var a struct {
			RangeFallback struct {
				ID    string
				Bytes int
				First string
			} `json:"rangeFallback"`
			Files []struct{ Content string }
		}
		if err := json.Unmarshal([]byte(r.body), &a); err != nil || len(a.Files) != 1 || a.Files[0].Content != content {
			t.Fatalf("%d-byte origin: %v %.200s", len(e.publicOrigin), err, r.body)
		}
		want := e.publicOrigin + "/v0/" + s.Token(route.CapRead) + "/z?id=" + a.RangeFallback.ID + "&part=0"
		if a.RangeFallback.First != want {
			t.Fatalf("first %q, want %q", a.RangeFallback.First, want)
		}
		var stored []byte
		for part := 0; ; part++ {
			p, err := s.store.Part(a.RangeFallback.ID, part, replay.ReadLevel)
			if err != nil {
				t.Fatal(err)
			}
			stored = append(stored, p.Chunk...)
			if !p.HasMore {
				break
			}
		}
		prefix, _ := transport.Marshal(rangeFallback{ID: a.RangeFallback.ID, Bytes: len(stored), First: want})
		if r.body != `{"rangeFallback":`+string(prefix)+","+string(stored[1:]) {
			t.Fatalf("%d-byte origin: the answer is not the stored one behind its rangeFallback", len(e.publicOrigin))
		}
	}
}
