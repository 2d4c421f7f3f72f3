package stitchslop

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// Files by path (issue 28): an agent names a file and the bridge's client
// side (the MCP face, or the shell) reads it and puts it into the call's
// arguments, so a design never travels as base64 through the model. Only
// the kinds the app opens go: images recognised by their bytes, and design
// files by the app's extensions.

// MaxFileBytes caps one file sent to the tab (14 MiB, the app's own cap).
const MaxFileBytes = 14 << 20

// maxFilesPerCall bounds the files of one call: one, and up to three more.
const maxFilesPerCall = 4

// designExts are the design files the app opens and produces, by extension.
var designExts = []string{
	"dst", "pes", "pec", "exp", "jef", "vp3", "sew", "xxx", "emd", "jpx", "shv", "pcs", "pcd", "pcq", "pcm",
	"tap", "tbf", "u01", "dsz", "z00", "csd", "vip", "hus",
	"svg", "dxf", "inf", "col", "stitchslop",
}

// imageKinds are the images the app opens, recognised by their bytes;
// exts are the extensions a file of that kind is written under.
var imageKinds = []struct {
	mime string
	exts []string
	is   func([]byte) bool
}{
	{"image/png", []string{"png"}, func(b []byte) bool { return bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) }},
	{"image/jpeg", []string{"jpg", "jpeg"}, func(b []byte) bool { return bytes.HasPrefix(b, []byte{0xFF, 0xD8, 0xFF}) }},
	{"image/webp", []string{"webp"}, func(b []byte) bool {
		return len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP"
	}},
	{"image/gif", []string{"gif"}, func(b []byte) bool {
		return bytes.HasPrefix(b, []byte("GIF87a")) || bytes.HasPrefix(b, []byte("GIF89a"))
	}},
}

// sniffImage is the image kind of b, "" for none.
func sniffImage(b []byte) (mime string, exts []string) {
	for _, k := range imageKinds {
		if k.is(b) {
			return k.mime, k.exts
		}
	}
	return "", nil
}

// extOf is name's extension, lower case, without the dot.
func extOf(name string) string {
	return strings.ToLower(strings.TrimPrefix(filepath.Ext(name), "."))
}

// designMime is the type a design file's data URL carries.
func designMime(ext string) string {
	if ext == "svg" {
		return "image/svg+xml"
	}
	return "application/octet-stream"
}

// kindsText lists what may be sent, for refusals.
func kindsText() string {
	return "images (PNG, JPEG, WebP, GIF, recognised by their bytes) and design files (." + strings.Join(designExts, " .") + ")"
}

// FileArg is one file for a call: read from Path, put into the args at
// Arg (a dotted key reaches into nested objects) as a data URL or text,
// and its base name at NameArg when set.
type FileArg struct {
	Path    string `json:"path"`
	Arg     string `json:"fileArg"`
	As      string `json:"as,omitempty"` // "dataUrl" (default) or "text"
	NameArg string `json:"nameArg,omitempty"`
}

// errRefused marks a file refused before anything was sent.
var errRefused = errors.New("refused")

func refused(path, format string, a ...any) error {
	return fmt.Errorf("%w: %s: %s", errRefused, path, fmt.Sprintf(format, a...))
}

// readSendable reads path as a file the tab may be sent: a regular file
// (a symlink is refused, so a planted link cannot hand over what it points
// at), in no hidden directory and not hidden itself (where keys and
// settings live), at most MaxFileBytes, and of a kind the app opens. It
// returns the bytes, their type and whether they are an image.
func readSendable(path string) (data []byte, mime string, image bool, err error) {
	if path == "" {
		return nil, "", false, refused("(no path)", "a file path is required")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, "", false, refused(path, "%v", err)
	}
	if hiddenIn(abs) {
		return nil, "", false, refused(path, "hidden files and files in hidden directories are refused")
	}
	fi, err := os.Lstat(abs)
	if err != nil {
		return nil, "", false, refused(path, "%v", unwrapPath(err))
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, "", false, refused(path, "a symbolic link is refused: name the file itself")
	case !fi.Mode().IsRegular():
		return nil, "", false, refused(path, "not a regular file")
	case fi.Size() > MaxFileBytes:
		return nil, "", false, refused(path, "%d bytes, more than the %d MiB a file may have", fi.Size(), MaxFileBytes>>20)
	}
	// The directories on the way may be links: where they lead counts.
	if real, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil && hiddenIn(real) {
		return nil, "", false, refused(path, "it is in a hidden directory (%s)", real)
	}
	f, err := openNoFollow(abs)
	if err != nil {
		return nil, "", false, refused(path, "%v", unwrapPath(err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxFileBytes {
		return nil, "", false, refused(path, "it changed while it was opened")
	}
	data, err = io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, "", false, refused(path, "%v", unwrapPath(err))
	}
	if len(data) > MaxFileBytes {
		return nil, "", false, refused(path, "more than the %d MiB a file may have", MaxFileBytes>>20)
	}
	if m, _ := sniffImage(data); m != "" {
		return data, m, true, nil
	}
	if ext := extOf(abs); slices.Contains(designExts, ext) {
		return data, designMime(ext), false, nil
	}
	return nil, "", false, refused(path, "not a kind the app opens: %s", kindsText())
}

// hiddenIn reports whether any element of the absolute path is hidden.
func hiddenIn(abs string) bool {
	for _, el := range strings.Split(filepath.ToSlash(abs), "/") {
		if strings.HasPrefix(el, ".") && el != "." && el != ".." {
			return true
		}
	}
	return false
}

// unwrapPath drops the path a *PathError repeats (the refusal names it).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// fileValue is fa's file as the value it is sent as.
func fileValue(fa FileArg) (json.RawMessage, error) {
	data, mime, image, err := readSendable(fa.Path)
	if err != nil {
		return nil, err
	}
	var s string
	switch fa.As {
	case "", "dataUrl":
		s = "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
	case "text":
		if image {
			return nil, refused(fa.Path, "an image cannot be sent as text (as: dataUrl)")
		}
		if !utf8.Valid(data) {
			return nil, refused(fa.Path, "not UTF-8 text (as: dataUrl sends it as it is)")
		}
		s = string(data)
	default:
		return nil, refused(fa.Path, "as must be dataUrl or text, got %q", clip(fa.As, 20))
	}
	return json.Marshal(s)
}

// withFiles returns args with every file put in: nothing is read into the
// call unless every file is sendable, so a refusal sends nothing.
func withFiles(args json.RawMessage, files []FileArg) (json.RawMessage, error) {
	if len(files) == 0 {
		return args, nil
	}
	if len(files) > maxFilesPerCall {
		return nil, fmt.Errorf("%w: at most %d files a call, got %d", errRefused, maxFilesPerCall, len(files))
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	out := args
	for _, fa := range files {
		if err := checkArgPath(fa.Arg); err != nil {
			return nil, fmt.Errorf("%w: fileArg: %v", errRefused, err)
		}
		v, err := fileValue(fa)
		if err != nil {
			return nil, err
		}
		if out, err = setArg(out, fa.Arg, v); err != nil {
			return nil, fmt.Errorf("%w: fileArg %s: %v", errRefused, fa.Arg, err)
		}
		if fa.NameArg != "" {
			if err := checkArgPath(fa.NameArg); err != nil {
				return nil, fmt.Errorf("%w: nameArg: %v", errRefused, err)
			}
			name, _ := json.Marshal(filepath.Base(fa.Path))
			if out, err = setArg(out, fa.NameArg, name); err != nil {
				return nil, fmt.Errorf("%w: nameArg %s: %v", errRefused, fa.NameArg, err)
			}
		}
	}
	return out, nil
}

// checkArgPath checks a dotted argument key: 1..8 non-empty parts.
func checkArgPath(key string) error {
	if key == "" {
		return errors.New("a key is required")
	}
	parts := strings.Split(key, ".")
	if len(parts) > 8 || len(key) > 256 {
		return fmt.Errorf("%q is too deep or too long", clip(key, 64))
	}
	for _, p := range parts {
		if p == "" {
			return fmt.Errorf("%q has an empty part", clip(key, 64))
		}
	}
	return nil
}

// setArg sets the dotted key in the JSON object obj to v, making the
// objects on the way; a value on the way that is not an object is an
// error.
func setArg(obj json.RawMessage, key string, v json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil || m == nil {
		return nil, errors.New("the arguments there are not a JSON object")
	}
	head, rest, nested := strings.Cut(key, ".")
	if !nested {
		m[head] = v
		return json.Marshal(m)
	}
	inner, ok := m[head]
	if !ok || string(inner) == "null" {
		inner = json.RawMessage(`{}`)
	}
	inner, err := setArg(inner, rest, v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", head, err)
	}
	m[head] = inner
	return json.Marshal(m)
}
