package aiui

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A prompts stream the backend cut in the middle of a line (it stopped,
// or dropped a reader that had stopped reading) used to hand the torn
// line to the parser: `hub aiui prompts --follow` then failed with
// "unexpected end of JSON input" (exit 1) instead of saying the backend
// stopped (exit 3). The whole lines before the cut still arrive.
func TestPromptsStreamCutMidLine(t *testing.T) {
	for _, chunked := range []bool{true, false} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			whole := `{"seq":1,"text":"whole"}` + "\n"
			torn := `{"seq":2,"text":"to`
			if !chunked {
				w.Header().Set("Content-Length", "4096")
			}
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(whole + torn))
			w.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close() // no terminating chunk: cut mid-stream
			}
		}))
		cl := NewClient(0, "k")
		cl.Base = srv.URL
		var got []string
		err := cl.Prompts(context.Background(), true, func(r Record, _ []byte) error {
			got = append(got, r.Text)
			return nil
		})
		srv.Close()
		if !errors.Is(err, ErrStreamCut) {
			t.Errorf("chunked=%v: err = %v, want ErrStreamCut", chunked, err)
		}
		if strings.Join(got, ",") != "whole" {
			t.Errorf("chunked=%v: lines = %q, want only the whole one", chunked, got)
		}
	}
}
