package control

import (
	"archive/zip"
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hubdev/hub/geturl/companion/extension"
)

// TestCompanionZip: the control page offers the extension it links to as
// a zip of exactly the exported files, on its own loopback Host only (a
// rebinding name gets nothing).
func TestCompanionZip(t *testing.T) {
	c := &Plane{ControlPort: 47433}
	c.ui = newUIAuth(time.Now)
	mux := http.NewServeMux()
	c.uiRoutes(mux)
	for _, tc := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:47433", http.StatusOK},
		{"evil.example:47433", http.StatusNotFound},
		{"127.0.0.1:8080", http.StatusNotFound},
	} {
		r := httptest.NewRequest("GET", "/ui/companion.zip", nil)
		r.Host = tc.host
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Fatalf("Host %s: status %d, want %d", tc.host, w.Code, tc.want)
		}
		if tc.want != http.StatusOK {
			continue
		}
		if ct := w.Header().Get("Content-Type"); ct != "application/zip" {
			t.Errorf("Content-Type %q", ct)
		}
		if cd := w.Header().Get("Content-Disposition"); cd != `attachment; filename="geturl-companion.zip"` {
			t.Errorf("Content-Disposition %q", cd)
		}
		zr, err := zip.NewReader(bytes.NewReader(w.Body.Bytes()), int64(w.Body.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if len(zr.File) != len(extension.Names()) {
			t.Errorf("zip holds %d files, the extension %d", len(zr.File), len(extension.Names()))
		}
	}
}
