package aiui

import (
	"encoding/binary"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// debugBlob is GET /debug/blob/{key}: an attachment a held trace stored,
// named by the opaque key the trace store issued. Nothing in the request
// reaches the filesystem: an unknown key (a path among them) is a 404, and
// so is a key whose trace fell out of the recent ones.
func (b *backend) debugBlob(w http.ResponseWriter, r *http.Request) {
	bl, ok := b.traces.blob(r.PathValue("key"))
	if !ok {
		http.NotFound(w, r)
		return
	}
	f, err := os.Open(bl.Path)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	// The client declared the type: nothing it sends may run here.
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cache-Control", "no-store")
	typ, rate := blobType(bl.Mime)
	if rate > 0 {
		h.Set("Content-Type", "audio/wav")
		http.ServeContent(w, r, "", time.Time{}, newWAV(f, fi.Size(), rate))
		return
	}
	h.Set("Content-Type", typ)
	if typ == "application/octet-stream" {
		h.Set("Content-Disposition", "attachment")
	}
	http.ServeContent(w, r, "", time.Time{}, f)
}

// blobType is the type a blob is served as: images and audio the viewer
// shows, raw PCM16 (the realtime path) as a WAV of that rate, anything
// else a download.
func blobType(declared string) (typ string, pcmRate int) {
	base, params, err := mime.ParseMediaType(declared)
	if err != nil {
		return "application/octet-stream", 0
	}
	switch base {
	case "image/png", "image/jpeg", "image/webp", "image/gif":
		return base, 0
	case "audio/webm", "video/webm":
		return "audio/webm", 0
	case "audio/ogg", "audio/mpeg", "audio/flac":
		return base, 0
	case "audio/wav", "audio/x-wav", "audio/wave":
		return "audio/wav", 0
	case "audio/mp4", "audio/m4a", "audio/x-m4a":
		return "audio/mp4", 0
	case "audio/pcm", "audio/l16":
		rate, err := strconv.Atoi(strings.TrimSpace(params["rate"]))
		if err != nil || rate < 8000 || rate > 192000 {
			rate = 24000 // the realtime transcriber's rate
		}
		return "audio/wav", rate
	}
	return "application/octet-stream", 0
}

// wav reads a mono PCM16 file as a WAV: a 44-byte header, then the
// samples as far as the file held them when the request came (a streamed
// segment is still growing).
type wav struct {
	head []byte
	body *io.SectionReader
	off  int64
}

func newWAV(f *os.File, size int64, rate int) *wav {
	size &^= 1 // whole samples
	h := make([]byte, 44)
	copy(h[0:], "RIFF")
	binary.LittleEndian.PutUint32(h[4:], uint32(36+size))
	copy(h[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:], 16) // fmt chunk size
	binary.LittleEndian.PutUint16(h[20:], 1)  // PCM
	binary.LittleEndian.PutUint16(h[22:], 1)  // mono
	binary.LittleEndian.PutUint32(h[24:], uint32(rate))
	binary.LittleEndian.PutUint32(h[28:], uint32(rate*2)) // bytes per second
	binary.LittleEndian.PutUint16(h[32:], 2)              // block align
	binary.LittleEndian.PutUint16(h[34:], 16)             // bits per sample
	copy(h[36:], "data")
	binary.LittleEndian.PutUint32(h[40:], uint32(size))
	return &wav{head: h, body: io.NewSectionReader(f, 0, size)}
}

func (v *wav) size() int64 { return int64(len(v.head)) + v.body.Size() }

func (v *wav) Read(p []byte) (int, error) {
	if v.off < int64(len(v.head)) {
		n := copy(p, v.head[v.off:])
		v.off += int64(n)
		return n, nil
	}
	n, err := v.body.ReadAt(p, v.off-int64(len(v.head)))
	v.off += int64(n)
	return n, err
}

func (v *wav) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += v.off
	case io.SeekEnd:
		offset += v.size()
	default:
		return 0, errors.New("wav: bad whence")
	}
	if offset < 0 {
		return 0, errors.New("wav: negative position")
	}
	v.off = offset
	return offset, nil
}
