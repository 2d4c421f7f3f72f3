package hub

import (
	"net/http/httptest"
	"testing"
)

func TestNormalizeOrigin(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"https://www.stitchslop.com", "https://www.stitchslop.com", true},
		{"HTTPS://WWW.StitchSlop.COM/", "https://www.stitchslop.com", true},
		{"https://example.com:443", "https://example.com", true},
		{"http://example.com:80/", "http://example.com", true},
		{"http://127.0.0.1:5173", "http://127.0.0.1:5173", true},
		{"http://[::1]:8080", "http://[::1]:8080", true},
		{"", "", false},
		{"null", "", false},
		{"NULL", "", false},
		{"example.com", "", false},
		{"ftp://example.com", "", false},
		{"https://example.com/path", "", false},
		{"https://user@example.com", "", false},
		{"https://example.com?x=1", "", false},
		{"https://example.com:99999", "", false},
		{"https://", "", false},
	}
	for _, tt := range tests {
		got, ok := NormalizeOrigin(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("NormalizeOrigin(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestOriginPolicy(t *testing.T) {
	p := NewOriginPolicy("https://www.stitchslop.com/")
	for origin, want := range map[string]bool{
		"https://www.stitchslop.com": true,
		// Browsers send the canonical form only: any other spelling of
		// the allowed origin is refused, not normalised (issue 15).
		"https://WWW.STITCHSLOP.COM/":    false,
		"https://www.stitchslop.com/":    false,
		"https://www.stitchslop.com:443": false,
		"HTTPS://www.stitchslop.com":     false,
		" https://www.stitchslop.com":    false,
		"https://www.stitchslop.com.":    false,
		"http://www.stitchslop.com":      false,
		"https://evil.stitchslop.com":    false,
		"null":                           false,
		"":                               false,
		"https://www.stitchslop.com:1":   false,
	} {
		if got := p.Allowed(origin); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", origin, got, want)
		}
	}
}

func TestSetCORS(t *testing.T) {
	p := NewOriginPolicy("https://app.example")
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Origin", "https://app.example")
	w := httptest.NewRecorder()
	if !p.SetCORS(w, r) {
		t.Fatal("allowed origin refused")
	}
	if got := w.Header().Get("Access-Control-Allow-Origin"); got != "https://app.example" {
		t.Errorf("ACAO = %q, want the canonical origin", got)
	}
	if got := w.Header().Get("Vary"); got != "Origin" {
		t.Errorf("Vary = %q", got)
	}
	// A non-canonical spelling is refused, so its raw value is never echoed.
	r.Header.Set("Origin", "https://APP.example")
	w = httptest.NewRecorder()
	if p.SetCORS(w, r) || w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("non-canonical origin got ACAO %q", w.Header().Get("Access-Control-Allow-Origin"))
	}
	r.Header.Set("Origin", "https://app.example")
	w = httptest.NewRecorder()
	if !p.SetCORS(w, r) {
		t.Fatal("allowed origin refused")
	}
	if got := w.Header().Get("Vary"); got != "Origin" {
		t.Errorf("Vary = %q", got)
	}
	r.Header.Set("Origin", "https://evil.example")
	w = httptest.NewRecorder()
	if p.SetCORS(w, r) || w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Error("untrusted origin got CORS headers")
	}
	if w.Header().Get("Vary") != "Origin" {
		t.Error("Vary: Origin missing on a refusal")
	}
	// Two Origin headers are never trusted.
	r.Header["Origin"] = []string{"https://app.example", "https://app.example"}
	if p.AllowedRequest(r) {
		t.Error("duplicate Origin headers accepted")
	}
}

func TestOriginPolicyLoopback(t *testing.T) {
	p := NewOriginPolicy("https://app.example").AllowLoopback()
	for origin, want := range map[string]bool{
		"https://app.example":      true,
		"http://127.0.0.1:5173":    true,
		"http://localhost:3000":    true,
		"https://localhost":        true,
		"http://[::1]:8080":        true,
		"http://127.0.0.2:5173":    false,
		"http://localhost.evil":    false,
		"http://evil.example":      false,
		"null":                     false,
		"file://localhost":         false,
		"http://127.0.0.1.nip.io/": false,
		// Loopback origins too must be canonical (issue 15, row 4).
		"HTTP://LOCALHOST:5173/": false,
		"http://localhost:5173/": false,
		"http://Localhost:5173":  false,
		"http://localhost:80":    false,
		"https://localhost:443":  false,
		"http://127.0.0.1:05173": false,
		"http://[0:0::1]:8080":   false,
		"http://localhost:5173 ": false,
	} {
		if got := p.Allowed(origin); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", origin, got, want)
		}
	}
	if NewOriginPolicy("https://app.example").Allowed("http://localhost:3000") {
		t.Error("loopback allowed without AllowLoopback")
	}
}

func TestOriginPolicyLenient(t *testing.T) {
	p := NewOriginPolicy("https://www.stitchslop.com").Lenient()
	for origin, want := range map[string]bool{
		"https://www.stitchslop.com":      true,
		"HTTPS://WWW.StitchSlop.COM":      true,
		"https://www.stitchslop.com/":     true,
		"https://www.stitchslop.com:443":  true,
		"http://www.stitchslop.com":       false,
		"https://www.stitchslop.com.evil": false,
		"":                                false,
		"null":                            false,
	} {
		if got := p.Allowed(origin); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", origin, got, want)
		}
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Origin", "HTTPS://WWW.StitchSlop.COM/")
	w := httptest.NewRecorder()
	if !p.SetCORS(w, r) || w.Header().Get("Access-Control-Allow-Origin") != "https://www.stitchslop.com" {
		t.Fatalf("lenient CORS echo %q, want the canonical origin", w.Header().Get("Access-Control-Allow-Origin"))
	}
}

func TestHostAllowed(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:8787":    true,
		"localhost:8787":    true,
		"LOCALHOST:8787":    true,
		"127.0.0.1:8788":    false,
		"127.0.0.1":         false,
		"evil.example:8787": false,
		"0.0.0.0:8787":      false,
		"[::1]:8787":        false,
		"":                  false,
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = host
		if got := HostAllowed(r, 8787); got != want {
			t.Errorf("HostAllowed(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestHasOrigin(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	if HasOrigin(r) {
		t.Error("no Origin reported as present")
	}
	r.Header.Set("Origin", "")
	if !HasOrigin(r) {
		t.Error("an empty Origin header is still an Origin header")
	}
}

func FuzzNormalizeOrigin(f *testing.F) {
	for _, s := range []string{"https://a.example", "HTTP://A:80/", "null", "", "http://[::1]:1", "https://x/%zz", "https://a.example:0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := NormalizeOrigin(s)
		if !ok {
			if n != "" {
				t.Fatalf("rejected origin returned %q", n)
			}
			return
		}
		// Normalising is idempotent and its result always matches itself.
		n2, ok2 := NormalizeOrigin(n)
		if !ok2 || n2 != n {
			t.Fatalf("NormalizeOrigin(%q) = %q, but normalising that gives %q, %v", s, n, n2, ok2)
		}
		if !NewOriginPolicy(s).Allowed(n) {
			t.Fatalf("policy for %q refuses its own normal form %q", s, n)
		}
	})
}
