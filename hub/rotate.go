package hub

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// Log size defaults: hub.log is capped at 10 MiB, with two old files kept
// (hub.log.1, hub.log.2), so a long-running hub's log never grows without
// bound.
const (
	DefaultLogMaxSize = 10 << 20
	DefaultLogKeep    = 2
)

// RotatingFile is an append-only log capped in size: a write that would
// take the file past MaxSize first shifts it to Path.1 (Path.1 to Path.2,
// and so on, Keep old files in all) and starts a fresh one. Files are
// opened through OpenPrivate (never through a planted link), mode 0600.
//
// Only this writer writes the file, so every line in it is what the
// logger wrote: JSON lines in a detached hub. What bypasses the logger —
// the runtime's stack trace of a crash, stray writes to stderr — goes to
// the files CrashFiles names and comes in as JSON records (Ingest).
type RotatingFile struct {
	Path    string
	MaxSize int64
	Keep    int

	mu   sync.Mutex
	f    *os.File
	size int64
	// closeFirst rotates by closing the file before renaming it (see
	// rotateClosed): where an open file cannot be renamed over.
	closeFirst bool
}

// OpenRotating opens (appending to) path; see RotatingFile.
func OpenRotating(path string, maxSize int64, keep int) (*RotatingFile, error) {
	r := &RotatingFile{Path: path, MaxSize: maxSize, Keep: max(keep, 1), closeFirst: !renameOverOpen}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *RotatingFile) open() error {
	f, err := OpenPrivate(r.Path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600, false)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err == nil && fi.Mode().Perm() != 0o600 {
		err = f.Chmod(0o600) // ours (checked), just readable by others
	}
	if err != nil {
		f.Close()
		return err
	}
	r.f, r.size = f, fi.Size()
	return nil
}

// Write appends p, rotating first when p would take the file past MaxSize
// (a single write larger than MaxSize goes whole into a fresh file).
func (r *RotatingFile) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return 0, os.ErrClosed
	}
	if r.MaxSize > 0 && r.size > 0 && r.size+int64(len(p)) > r.MaxSize {
		if err := r.rotate(); err != nil {
			if r.f == nil { // closed for rotation, and nothing could be reopened
				return 0, err
			}
			// Keep logging to the old file rather than losing lines.
			fmt.Fprintf(r.f, `{"level":"ERROR","msg":"cannot rotate the log","err":%q}`+"\n", err.Error())
		}
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	return n, err
}

// rotate moves the current file to .1 (the older ones on) and starts a
// new one.
func (r *RotatingFile) rotate() error {
	for i := r.Keep - 1; i >= 1; i-- {
		if err := os.Rename(fmt.Sprintf("%s.%d", r.Path, i), fmt.Sprintf("%s.%d", r.Path, i+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if r.closeFirst {
		return r.rotateClosed()
	}
	return r.rotateLinked()
}

// rotateLinked starts the new file without the path ever going missing,
// for `hub logs` and anyone else reading it: the current file is linked
// as .1 and a fresh file renamed over the path (unix).
func (r *RotatingFile) rotateLinked() error {
	fresh := r.Path + ".new"
	os.Remove(fresh)
	f, err := OpenPrivate(fresh, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600, false)
	if err != nil {
		return err
	}
	os.Remove(r.Path + ".1") // keep == 1: the oldest goes
	// A log deleted under us has nothing to keep: the fresh one takes its place.
	if err := os.Link(r.Path, r.Path+".1"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		f.Close()
		os.Remove(fresh)
		return err
	}
	if err := os.Rename(fresh, r.Path); err != nil {
		f.Close()
		os.Remove(fresh)
		return err
	}
	old := r.f
	r.f, r.size = f, 0
	return old.Close()
}

// rotateClosed closes the current file, renames it to .1 and opens a
// fresh one at the path, which is missing for that moment (a reader
// retries). Windows needs it: Go opens files there without
// FILE_SHARE_DELETE, so no open file can be renamed or replaced. If the
// rename or the open fails, logging goes on in the file at the path.
func (r *RotatingFile) rotateClosed() error {
	if err := r.f.Close(); err != nil {
		return err
	}
	r.f = nil
	os.Remove(r.Path + ".1") // keep == 1: the oldest goes
	rerr := os.Rename(r.Path, r.Path+".1")
	if rerr != nil && errors.Is(rerr, fs.ErrNotExist) {
		rerr = nil // deleted under us: nothing to keep
	}
	if err := r.open(); err != nil {
		// Back to the file just moved aside, rather than losing lines.
		if rerr == nil {
			if f, ferr := OpenPrivate(r.Path+".1", os.O_WRONLY|os.O_APPEND, 0, false); ferr == nil {
				r.f = f
			}
		}
		return errors.Join(rerr, err)
	}
	return rerr
}

// Heal reopens the log at Path when Path no longer names the file being
// written (it was deleted, or moved aside by hand): what the hub logs from
// then on lands where `hub logs` reads. A link
// or unsafe file in its place is refused (OpenPrivate), and writing goes
// on to the old file.
func (r *RotatingFile) Heal() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	held, err := r.f.Stat()
	if err != nil {
		return err
	}
	if cur, err := os.Lstat(r.Path); err == nil && os.SameFile(held, cur) {
		return nil
	}
	old := r.f
	if err := r.open(); err != nil {
		return err
	}
	return old.Close()
}

// Close closes the current file.
func (r *RotatingFile) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// RotateFiles shifts path to path.1, path.1 to path.2, … keeping keep old
// files (the oldest is overwritten). Renames replace links, never follow
// them. A missing file is fine.
func RotateFiles(path string, keep int) error {
	keep = max(keep, 1)
	for i := keep - 1; i >= 1; i-- {
		if err := os.Rename(fmt.Sprintf("%s.%d", path, i), fmt.Sprintf("%s.%d", path, i+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := os.Rename(path, path+".1"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
