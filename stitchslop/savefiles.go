package stitchslop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/hub/mcpserver"
)

// Files out (issue 28): the files in a reply are written under the names
// the app gives them, into a directory the agent names, and the reply
// carries where they went instead of their bytes.

// SaveOptions say where and how a reply's files are written.
type SaveOptions struct {
	// Dir is the directory written into (made if missing).
	Dir string
	// FileName names a top-level dataUrl when the reply names none.
	FileName string
	// TextFile writes a top-level text to this name.
	TextFile string
	// Overwrite replaces an existing file; without it one is never
	// written over.
	Overwrite bool
	// Command names a top-level image the reply does not name
	// (<command>.png).
	Command string
}

// SavedFile is one file written.
type SavedFile struct {
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
}

// NotSaved is one file of the reply that was not written, and why.
type NotSaved struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// errNoFiles: the reply carries nothing to write.
var errNoFiles = errors.New("the answer carries no file (no dataUrl, no {name, dataUrl}, no text to write)")

// saveFiles writes every {name, dataUrl} in the envelope, its top-level
// dataUrl, and its top-level text (named by TextFile, or by the reply
// for a text kind) into o.Dir; each one written is replaced by savedTo /
// savedBytes where it was (textSavedTo / textSavedBytes for the text),
// and the envelope gains saved and notSaved lists. A name is a base name
// of a kind the app produces, never hidden, never with a separator or
// "..", and the file is never written through a link out of the
// directory (os.Root), nor over an existing file unless o.Overwrite.
func saveFiles(env []byte, o SaveOptions) ([]byte, []SavedFile, []NotSaved, error) {
	var top map[string]any
	dec := json.NewDecoder(bytes.NewReader(env))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil || top == nil {
		return env, nil, nil, errors.New("the answer is not a JSON object")
	}
	w := &saver{o: o}
	defer w.close()
	if du, ok := top["dataUrl"].(string); ok {
		name := o.FileName
		if name == "" {
			name = replyName(top)
		}
		if name == "" {
			name = defaultName(o.Command, du)
		}
		w.save(top, name, du, "savedTo", "savedBytes", "dataUrl")
	}
	if text, ok := top["text"].(string); ok {
		name := o.TextFile
		if _, hasImage := top["dataUrl"]; name == "" && !hasImage {
			if n := replyName(top); slices.Contains(designExts, extOf(n)) {
				name = n
			}
		}
		if name != "" {
			w.saveText(top, name, text)
		}
	}
	for k, v := range top {
		if k != "dataUrl" && k != "text" {
			w.walk(v)
		}
	}
	if w.err != nil {
		return nil, nil, nil, w.err
	}
	if len(w.saved) == 0 && len(w.notSaved) == 0 {
		return env, nil, nil, errNoFiles
	}
	if len(w.saved) > 0 {
		top["saved"] = w.saved
	}
	if len(w.notSaved) > 0 {
		top["notSaved"] = w.notSaved
	}
	out, err := json.Marshal(top)
	return out, w.saved, w.notSaved, err
}

// replyName is the file name the reply gives (name, else fileName).
func replyName(m map[string]any) string {
	for _, k := range []string{"name", "fileName"} {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// defaultName names an image the reply does not: <command>.<ext>.
func defaultName(command, dataURL string) string {
	mime, _, ok := mcpserver.ParseDataURL(dataURL)
	if !ok {
		return ""
	}
	for _, k := range imageKinds {
		if k.mime == mime {
			base := strings.Map(func(r rune) rune {
				if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
					return r
				}
				return '-'
			}, command)
			if base == "" {
				base = "render"
			}
			return base + "." + k.exts[0]
		}
	}
	return ""
}

type saver struct {
	o        SaveOptions
	root     *os.Root
	dir      string
	saved    []SavedFile
	notSaved []NotSaved
	err      error // the directory cannot be used: nothing can be saved
}

// walk finds {name, dataUrl} objects below the top level.
func (w *saver) walk(v any) {
	switch x := v.(type) {
	case map[string]any:
		du, isDU := x["dataUrl"].(string)
		name, isName := x["name"].(string)
		if isDU && isName {
			w.save(x, name, du, "savedTo", "savedBytes", "dataUrl")
		}
		for k, c := range x {
			if k != "dataUrl" {
				w.walk(c)
			}
		}
	case []any:
		for _, c := range x {
			w.walk(c)
		}
	}
}

// save decodes the data URL and writes it as name; on success m's key
// field is replaced by the saved path and size.
func (w *saver) save(m map[string]any, name, dataURL, toKey, bytesKey, field string) {
	_, data, ok := mcpserver.ParseDataURL(dataURL)
	if !ok {
		w.notSaved = append(w.notSaved, NotSaved{Name: clip(name, 120), Reason: "its dataUrl is not data:<type>;base64,<data>"})
		return
	}
	if why := fileNameProblem(name, data); why != "" {
		w.notSaved = append(w.notSaved, NotSaved{Name: clip(name, 120), Reason: why})
		return
	}
	w.write(m, name, data, toKey, bytesKey, field)
}

// saveText writes a top-level text as name.
func (w *saver) saveText(m map[string]any, name, text string) {
	if why := fileNameProblem(name, nil); why != "" {
		w.notSaved = append(w.notSaved, NotSaved{Name: clip(name, 120), Reason: why})
		return
	}
	w.write(m, name, []byte(text), "textSavedTo", "textSavedBytes", "text")
}

// fileNameProblem says why name may not be written ("" when it may): a
// base name, not hidden, of a kind the app produces; an image name must
// hold an image of its kind.
func fileNameProblem(name string, data []byte) string {
	switch {
	case name == "" || len(name) > 255:
		return "a file name of 1..255 bytes is required"
	case strings.ContainsAny(name, `/\`) || name == "." || name == "..":
		return "a name with a path in it is refused (a base name only)"
	case strings.HasPrefix(name, "."):
		return "a hidden name is refused"
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7F || r == ':' }):
		return "the name has control characters or a colon"
	}
	ext := extOf(name)
	if slices.Contains(designExts, ext) {
		return ""
	}
	for _, k := range imageKinds {
		if slices.Contains(k.exts, ext) {
			if data != nil && !k.is(data) {
				return "its bytes are not " + strings.TrimPrefix(k.mime, "image/") + " as its name says"
			}
			return ""
		}
	}
	return "not a kind the app produces: " + kindsText()
}

func (w *saver) close() {
	if w.root != nil {
		w.root.Close()
	}
}

// open opens the directory once, making it if missing.
func (w *saver) open() bool {
	if w.root != nil {
		return true
	}
	if w.err != nil {
		return false
	}
	dir := w.o.Dir
	if dir == "" {
		w.err = errors.New("a directory to save into is required")
		return false
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		err = os.MkdirAll(abs, 0o755)
	}
	if err == nil {
		w.root, err = os.OpenRoot(abs)
	}
	if err != nil {
		w.err = fmt.Errorf("cannot save into %s: %v", dir, unwrapPath(err))
		return false
	}
	w.dir = abs
	return true
}

// write puts data in name inside the directory: created exclusively, or
// (Overwrite) written aside and renamed over a regular file. os.Root
// never follows a link out of the directory.
func (w *saver) write(m map[string]any, name string, data []byte, toKey, bytesKey, field string) {
	if !w.open() {
		return
	}
	fail := func(why string) { w.notSaved = append(w.notSaved, NotSaved{Name: name, Reason: why}) }
	if fi, err := w.root.Lstat(name); err == nil {
		switch {
		case !w.o.Overwrite:
			fail("a file of that name exists (overwrite to replace it)")
			return
		case !fi.Mode().IsRegular():
			fail("what has that name is not a regular file; it is left alone")
			return
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		fail(unwrapPath(err).Error())
		return
	}
	target := name
	if w.o.Overwrite {
		target = "." + name + "." + hub.RandomHex(6) + ".tmp"
	}
	f, err := w.root.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			fail("a file of that name exists (overwrite to replace it)")
		} else {
			fail(unwrapPath(err).Error())
		}
		return
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && target != name {
		err = w.root.Rename(target, name)
	}
	if err != nil {
		w.root.Remove(target)
		fail(unwrapPath(err).Error())
		return
	}
	path := filepath.Join(w.dir, name)
	delete(m, field)
	m[toKey], m[bytesKey] = path, len(data)
	w.saved = append(w.saved, SavedFile{Path: path, Bytes: len(data)})
}
