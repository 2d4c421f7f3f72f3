package terminal

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestDetectURLs(t *testing.T) {
	for _, tc := range []struct {
		name, transcript string
		urls             []string
		ports            []int
	}{
		{
			name: "vite with colours",
			transcript: "\n  \x1b[32m\x1b[1mVITE\x1b[22m v5.4.2\x1b[39m  \x1b[2mready in \x1b[0m\x1b[1m312\x1b[22m\x1b[2m\x1b[0m ms\x1b[22m\n\n" +
				"  \x1b[32m➜\x1b[39m  \x1b[1mLocal\x1b[22m:   \x1b[36mhttp://localhost:\x1b[1m5173\x1b[22m/\x1b[39m\n" +
				"  \x1b[32m➜\x1b[39m  \x1b[1mNetwork\x1b[22m: \x1b[2muse \x1b[22m\x1b[1m--host\x1b[22m\x1b[2m to expose\x1b[22m\n",
			urls:  []string{"http://localhost:5173/"},
			ports: []int{5173},
		},
		{
			name:       "vite --host",
			transcript: "  ➜  Local:   http://localhost:5173/\n  ➜  Network: http://192.168.1.20:5173/\n",
			urls:       []string{"http://localhost:5173/"},
			ports:      []int{5173},
		},
		{
			name:       "next",
			transcript: "  ▲ Next.js 14.2.3\n  - Local:        http://localhost:3000\n\n ✓ Ready in 1.2s\n",
			urls:       []string{"http://localhost:3000"},
			ports:      []int{3000},
		},
		{
			name:       "webpack dev server",
			transcript: "<i> [webpack-dev-server] Project is running at:\n<i> [webpack-dev-server] Loopback: http://localhost:8080/, http://[::1]:8080/\n<i> [webpack-dev-server] On Your Network (IPv4): http://10.0.0.5:8080/\n",
			urls:       []string{"http://localhost:8080/", "http://[::1]:8080/"},
			ports:      []int{8080},
		},
		{
			name:       "python http.server",
			transcript: "Serving HTTP on 0.0.0.0 port 8000 (http://0.0.0.0:8000/) ...\n",
			urls:       []string{"http://127.0.0.1:8000/"},
			ports:      []int{8000},
		},
		{
			name:       "python http.server ipv6",
			transcript: "Serving HTTP on :: port 8001 (http://[::]:8001/) ...\n",
			urls:       []string{"http://[::1]:8001/"},
			ports:      []int{8001},
		},
		{
			name:       "flask",
			transcript: " * Serving Flask app 'app'\n * Debug mode: on\n * Running on http://127.0.0.1:5000\nPress CTRL+C to quit\n",
			urls:       []string{"http://127.0.0.1:5000"},
			ports:      []int{5000},
		},
		{
			name:       "django",
			transcript: "Django version 5.0, using settings 'site.settings'\nStarting development server at http://127.0.0.1:8000/\nQuit the server with CONTROL-C.\n",
			urls:       []string{"http://127.0.0.1:8000/"},
			ports:      []int{8000},
		},
		{
			name:       "go listening on :port",
			transcript: "2024/05/01 12:00:00 listening on :8080\n",
			ports:      []int{8080},
		},
		{
			name:       "bare host:port",
			transcript: "ready - started server on 0.0.0.0:3000, url: http://localhost:3000\n",
			urls:       []string{"http://127.0.0.1:3000/", "http://localhost:3000"},
			ports:      []int{3000},
		},
		{
			name:       "sentence punctuation",
			transcript: "Open http://localhost:4200/. Or (http://127.0.0.1:4201).\n",
			urls:       []string{"http://localhost:4200/", "http://127.0.0.1:4201"},
			ports:      []int{4200, 4201},
		},
		{
			name:       "not loopback",
			transcript: "see https://vitejs.dev/config/ and http://localhost.evil.com:80/ and https://registry.npmjs.org/\n",
		},
		{
			name:       "no port",
			transcript: "docs at http://localhost/docs\n",
			urls:       []string{"http://localhost/docs"},
		},
		{
			name:       "bad ports",
			transcript: "http://localhost:99999/ port 0 port 70000 http://localhost:0/\n",
		},
		{
			name:       "words that contain port",
			transcript: "import 1234 from report 2024; supports 8080\n",
		},
		{
			name:       "duplicates",
			transcript: "http://localhost:5173/\nhttp://localhost:5173/\nport 5173\n",
			urls:       []string{"http://localhost:5173/"},
			ports:      []int{5173},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			urls, ports := DetectURLs(stripANSI(tc.transcript))
			if !slices.Equal(urls, tc.urls) || !slices.Equal(ports, tc.ports) {
				t.Errorf("got %q %v; want %q %v", urls, ports, tc.urls, tc.ports)
			}
		})
	}
}

func TestDetectURLsBounded(t *testing.T) {
	var b strings.Builder
	for p := 3000; p < 3100; p++ {
		fmt.Fprintf(&b, "http://localhost:%d/\nport %d\n", p, p+1000)
	}
	urls, ports := DetectURLs(b.String())
	if len(urls) != MaxDetected || len(ports) != MaxDetected {
		t.Fatalf("%d urls, %d ports; want %d each", len(urls), len(ports), MaxDetected)
	}
}

// FuzzDetectURLs: whatever a process prints, detection never panics, stays
// bounded, and reports only loopback http(s) URLs and valid ports.
func FuzzDetectURLs(f *testing.F) {
	for _, s := range []string{
		"http://localhost:5173/", "Serving HTTP on :: port 8000 (http://[::]:8000/) ...",
		"listening on :8080", "http://[::1", "http://0.0.0.0:1/%zz", "localhost:65536", "port 99999",
		"http://127.0.0.1:3000]", "https://user:pw@localhost:1/", "http://[::1]]]]:80",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		urls, ports := DetectURLs(s)
		if len(urls) > MaxDetected || len(ports) > MaxDetected {
			t.Fatalf("unbounded: %d %d", len(urls), len(ports))
		}
		for _, u := range urls {
			if _, _, ok := loopbackURL(u); !ok || !(strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")) {
				t.Fatalf("reported %q", u)
			}
		}
		for _, p := range ports {
			if p < 1 || p > 65535 {
				t.Fatalf("port %d", p)
			}
		}
	})
}
