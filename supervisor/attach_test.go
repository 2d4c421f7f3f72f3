package supervisor

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// GET /attach holds an agent attached for as long as the stream is open,
// behind the same gate as every control route.
func TestControlAttach(t *testing.T) {
	var attached atomic.Int32
	c := &Control{Key: "k", Status: func() any { return nil }, Stop: func() {},
		Attach: func() func() { attached.Add(1); return func() { attached.Add(-1) } }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, port, _ := strings.Cut(r.Host, ":")
		c.Port, _ = strconv.Atoi(port)
		c.ServeHTTP(w, r)
	}))
	defer srv.Close()
	cases := []struct {
		name string
		key  string
		want int
	}{
		{"no key", "", http.StatusUnauthorized},
		{"the key", "k", http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/attach", nil)
			if tc.key != "" {
				req.Header.Set(KeyHeader, tc.key)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want != http.StatusOK {
				if attached.Load() != 0 {
					t.Fatal("a refused request attached")
				}
				return
			}
			line, err := bufio.NewReader(resp.Body).ReadString('\n')
			if err != nil || line != `{"type":"attached"}`+"\n" {
				t.Fatalf("first line %q %v", line, err)
			}
			if n := attached.Load(); n != 1 {
				t.Fatalf("attached %d, want 1", n)
			}
			cancel()
			resp.Body.Close()
			for deadline := time.Now().Add(5 * time.Second); attached.Load() != 0; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the face never detached")
				}
			}
		})
	}
}
