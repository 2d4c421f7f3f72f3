// Package extension is geturl's browser companion: an unpacked Manifest V3
// extension (plain JavaScript, no build step, no remote code) embedded in
// the hub binary, and Export, which writes it out for a browser's "Load
// unpacked" (`hub geturl companion export DIR`).
//
// The extension pairs with geturl's control plane, binds a chat tab to a
// fresh geturl session and keeps the session's lease alive while the tab
// is open; the wire contract is docs/protocols/geturl.md, "Browser
// companion".
package extension

import (
	"archive/zip"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/hubdev/hub/hub"
)

// files is the extension, exactly the files a browser loads.
//
//go:embed manifest.json background.js inject.js popup.html popup.js popup.css
var files embed.FS

// FS is the extension's files (a flat tree).
func FS() fs.FS { return files }

// Names lists the extension's files, sorted.
func Names() []string {
	ents, _ := files.ReadDir(".")
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// Name is the extension's name in its manifest; Export recognises a
// previous export by it.
func Name() string {
	var m struct{ Name string }
	b, _ := files.ReadFile("manifest.json")
	json.Unmarshal(b, &m)
	return m.Name
}

// Export writes the extension into dir: files 0644, dir 0755 (created,
// with its parents, if missing). dir must be missing, empty, or hold a
// previous export — only regular files (no symlinks, no directories) named
// as the extension's files, among them a manifest.json of this user naming
// this extension — whose files are then replaced, each atomically. Anything
// else in dir is refused, and nothing is written.
func Export(dir string) error {
	if dir == "" {
		return errors.New("no directory given")
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			return err
		}
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	default:
		if err := checkPrevious(dir); err != nil {
			return err
		}
	}
	for _, name := range Names() {
		b, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		if err := hub.WriteFileAtomic(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// checkPrevious accepts an empty dir or a previous export.
func checkPrevious(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(ents) == 0 {
		return nil
	}
	ours := Names()
	for _, e := range ents {
		if !e.Type().IsRegular() || !slices.Contains(ours, e.Name()) {
			return fmt.Errorf("%s is not empty and is not a previous export of the companion (it holds %q); choose an empty or new directory", dir, e.Name())
		}
	}
	b, err := hub.ReadOwnFile(filepath.Join(dir, "manifest.json"), 64<<10)
	if err != nil {
		return fmt.Errorf("%s is not empty and is not a previous export of the companion: %v", dir, err)
	}
	var m struct{ Name string }
	if json.Unmarshal(b, &m) != nil || m.Name != Name() {
		return fmt.Errorf("%s is not empty and its manifest.json is not the companion's; choose an empty or new directory", dir)
	}
	return nil
}

// ZipDir is the folder a Zip unpacks to.
const ZipDir = "geturl-companion"

// Zip writes the extension as a zip archive of one folder, ZipDir, holding
// exactly the files Export writes: what the control page offers for
// download, to unpack and load the same way.
func Zip(w io.Writer) error {
	zw := zip.NewWriter(w)
	for _, name := range Names() {
		b, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		h := &zip.FileHeader{Name: ZipDir + "/" + name, Method: zip.Deflate}
		h.SetMode(0o644)
		f, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := f.Write(b); err != nil {
			return err
		}
	}
	return zw.Close()
}
