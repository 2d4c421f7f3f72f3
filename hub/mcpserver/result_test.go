package mcpserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

func TestParseDataURL(t *testing.T) {
	cases := []struct {
		url, mime, data string
		ok              bool
	}{
		{"data:image/png;base64,QUJD", "image/png", "ABC", true},
		{"data:image/svg+xml;base64,PHN2Zy8+", "image/svg+xml", "<svg/>", true},
		{"data:image/png;base64,@@@", "", "", false},
		{"data:;base64,QUJD", "", "", false},
		{"data:image/png;base64,", "", "", false},
		{"data:image/png,QUJD", "", "", false},
		{"data:image png;base64,QUJD", "", "", false},
		{"http://x/y.png", "", "", false},
	}
	for _, tc := range cases {
		mime, data, ok := ParseDataURL(tc.url)
		if ok != tc.ok || mime != tc.mime || string(data) != tc.data {
			t.Errorf("ParseDataURL(%q) = %q %q %v", tc.url, mime, data, ok)
		}
	}
}

// The SDK base64-encodes an image block's bytes itself: for the canonical
// base64 a browser produces, the wire must carry the data URL's own text,
// as the hand-written Stitch Slop face did.
func TestImageWireBytes(t *testing.T) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n fake image bytes \x00\xff"))
	img, ok := ImageFromDataURL("data:image/png;base64," + png)
	if !ok {
		t.Fatal("refused")
	}
	b, err := json.Marshal(img)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"image","mimeType":"image/png","data":"` + png + `"}`; string(b) != want {
		t.Fatalf("\n got %s\nwant %s", b, want)
	}
}

// FuzzImageFromDataURL: an accepted data URL's block decodes to the URL's
// bytes, and canonical base64 goes out unchanged.
func FuzzImageFromDataURL(f *testing.F) {
	for _, s := range []string{"data:image/png;base64,QUJD", "data:a/b;base64,QQ==", "data:a/b;base64,QR==", "data:a/b;base64,QU\nJD", "data:x;base64,@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, url string) {
		img, ok := ImageFromDataURL(url)
		if !ok {
			return
		}
		b, err := json.Marshal(img)
		if err != nil {
			t.Fatal(err)
		}
		var wire struct{ Data string }
		if err := json.Unmarshal(b, &wire); err != nil {
			t.Fatal(err)
		}
		_, b64, _ := strings.Cut(url, ";base64,")
		want, _ := base64.StdEncoding.DecodeString(b64)
		got, err := base64.StdEncoding.DecodeString(wire.Data)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("wire data %q decodes to %q, want %q", wire.Data, got, want)
		}
		if base64.StdEncoding.EncodeToString(want) == b64 && wire.Data != b64 {
			t.Fatalf("canonical %q went out as %q", b64, wire.Data)
		}
	})
}
