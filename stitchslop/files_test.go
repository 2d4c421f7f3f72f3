package stitchslop

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var (
	pngBytes  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDRfake")
	jpegBytes = []byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 'J', 'F', 'I', 'F'}
	webpBytes = []byte("RIFF\x10\x00\x00\x00WEBPVP8 ")
	gifBytes  = []byte("GIF89a\x01\x00\x01\x00")
)

func writeFile(t *testing.T, path string, b []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Issue 28 item 4, in: only what the app opens is read, by bytes for
// images and by extension for designs; hidden files, links, special files
// and files over 14 MiB are refused, the last before being read.
func TestReadSendable(t *testing.T) {
	dir := t.TempDir()
	secretDir := filepath.Join(dir, ".secrets")
	writeFile(t, filepath.Join(secretDir, "key.dst"), []byte("not a design"))
	if err := os.Symlink(secretDir, filepath.Join(dir, "designs")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "real.png"), pngBytes)
	if err := os.Symlink(filepath.Join(dir, "real.png"), filepath.Join(dir, "link.png")); err != nil {
		t.Fatal(err)
	}
	hasFIFO := makeFIFO(t, filepath.Join(dir, "pipe.dst"))
	big := filepath.Join(dir, "huge.dst")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(MaxFileBytes + 1) // sparse: refused by its size, never read
	f.Close()
	cases := []struct {
		name, file string
		data       []byte // nil: the file is made above
		mime       string // "" when refused
		why        string
	}{
		{"png", "a.png", pngBytes, "image/png", ""},
		{"jpeg", "a.jpg", jpegBytes, "image/jpeg", ""},
		{"webp", "a.webp", webpBytes, "image/webp", ""},
		{"gif", "a.gif", gifBytes, "image/gif", ""},
		{"an image by its bytes whatever its name", "photo.bin", pngBytes, "image/png", ""},
		{"a design by its extension", "hoop.DST", []byte{0, 1, 2, 3}, "application/octet-stream", ""},
		{"svg", "logo.svg", []byte("<svg/>"), "image/svg+xml", ""},
		{"the app's own format", "work.stitchslop", []byte(`{"v":1}`), "application/octet-stream", ""},
		{"a png name on other bytes", "fake.png", []byte("hello"), "", "not a kind the app opens"},
		{"another kind", "notes.txt", []byte("hello"), "", "not a kind the app opens"},
		{"a hidden file", ".hoop.dst", []byte{1}, "", "hidden"},
		{"in a hidden directory", ".cache/hoop.dst", []byte{1}, "", "hidden"},
		{"through a link to a hidden directory", "designs/key.dst", nil, "", "hidden directory"},
		{"a symbolic link", "link.png", nil, "", "symbolic link"},
		{"a FIFO", "pipe.dst", nil, "", "not a regular file"},
		{"over 14 MiB", "huge.dst", nil, "", "more than the 14 MiB"},
		{"missing", "gone.dst", nil, "", "no such file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.file == "pipe.dst" && !hasFIFO {
				t.Skip("no FIFOs here")
			}
			path := filepath.Join(dir, tc.file)
			if tc.data != nil {
				writeFile(t, path, tc.data)
			}
			data, mime, _, err := readSendable(path)
			if tc.mime == "" {
				if err == nil || !errors.Is(err, errRefused) || !strings.Contains(err.Error(), tc.why) {
					t.Fatalf("err = %v, want a refusal saying %q", err, tc.why)
				}
				return
			}
			if err != nil || mime != tc.mime || !bytes.Equal(data, tc.data) {
				t.Fatalf("= %q %q %v, want %q", data, mime, err, tc.mime)
			}
		})
	}
}

// withFiles puts each file where its key says (dotted keys nest), its
// name where nameArg says, as a data URL or text; any refusal leaves
// nothing to send.
func TestWithFiles(t *testing.T) {
	dir := t.TempDir()
	png := writeFile(t, filepath.Join(dir, "hoop.png"), pngBytes)
	svg := writeFile(t, filepath.Join(dir, "logo.svg"), []byte("<svg>é</svg>"))
	dst := writeFile(t, filepath.Join(dir, "a.dst"), []byte{0xFF, 0xFE, 0})
	out, err := withFiles(json.RawMessage(`{"keep":1,"design":{"scale":2}}`), []FileArg{
		{Path: png, Arg: "design.image", NameArg: "design.name"},
		{Path: svg, Arg: "svg", As: "text"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Keep   int `json:"keep"`
		Design struct {
			Scale int    `json:"scale"`
			Image string `json:"image"`
			Name  string `json:"name"`
		} `json:"design"`
		SVG string `json:"svg"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Keep != 1 || got.Design.Scale != 2 || got.Design.Name != "hoop.png" || got.SVG != "<svg>é</svg>" ||
		got.Design.Image != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(pngBytes) {
		t.Fatalf("args = %s", out)
	}
	for _, tc := range []struct {
		name  string
		args  string
		files []FileArg
		why   string
	}{
		{"binary as text", `{}`, []FileArg{{Path: dst, Arg: "f", As: "text"}}, "not UTF-8"},
		{"an image as text", `{}`, []FileArg{{Path: png, Arg: "f", As: "text"}}, "cannot be sent as text"},
		{"an unknown as", `{}`, []FileArg{{Path: png, Arg: "f", As: "base64"}}, "as must be"},
		{"no key", `{}`, []FileArg{{Path: png}}, "a key is required"},
		{"an empty key part", `{}`, []FileArg{{Path: png, Arg: "a..b"}}, "empty part"},
		{"through a value that is not an object", `{"a":5}`, []FileArg{{Path: png, Arg: "a.b"}}, "not a JSON object"},
		{"five files", `{}`, []FileArg{{Path: png, Arg: "a"}, {Path: png, Arg: "b"}, {Path: png, Arg: "c"}, {Path: png, Arg: "d"}, {Path: png, Arg: "e"}}, "at most 4"},
		{"one good, one refused", `{}`, []FileArg{{Path: png, Arg: "a"}, {Path: filepath.Join(dir, ".x.dst"), Arg: "b"}}, "hidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if out, err := withFiles(json.RawMessage(tc.args), tc.files); err == nil || out != nil || !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("= %s %v, want nothing and an error saying %q", out, err, tc.why)
			}
		})
	}
}
