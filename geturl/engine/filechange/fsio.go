package filechange

import (
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"syscall"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

// fsys does the engine's file operations through an os.Root opened on the
// scope's canonical root. The paths it takes are root-relative realpaths
// the sandbox has already approved; os.Root adds the guarantee that a
// symlink swapped in after that check cannot lead an operation out of the
// project (it refuses instead of following).
type fsys struct {
	root *os.Root
	// hook, when set (tests), runs before each step of a write and can make
	// it fail, to prove what a failure at that point leaves behind.
	hook func(op, rel string) error
	// key signs and checks the crash log (nil: the process's key).
	key *LogKey
}

// Internal failures the callers turn into agent-facing codes.
var (
	errIsDir      = errors.New("is a directory")
	errNotRegular = errors.New("not a regular file")
	errTooLarge   = errors.New("file too large")
)

func openFS(scope *sandbox.Scope, key *LogKey, hook func(op, rel string) error) (*fsys, error) {
	r, err := os.OpenRoot(scope.Root())
	if err != nil {
		return nil, err
	}
	return &fsys{root: r, key: key, hook: hook}, nil
}

func (f *fsys) close() { f.root.Close() }

func (f *fsys) step(op, rel string) error {
	if f.hook != nil {
		return f.hook(op, rel)
	}
	return nil
}

// stat describes what is at rel without following a final symlink.
func (f *fsys) lstat(rel string) (fs.FileInfo, error) { return f.root.Lstat(rel) }

// readRegular reads the regular file at rel, refusing directories,
// special files and files over limit bytes.
func (f *fsys) readRegular(rel string, limit int64) ([]byte, fs.FileInfo, error) {
	return readRegular(f.root, rel, limit)
}

// readRegular reads the regular file name in r. O_NONBLOCK: opening a
// FIFO must not wait for a writer.
func readRegular(r *os.Root, name string, limit int64) ([]byte, fs.FileInfo, error) {
	fh, err := r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	switch {
	case err != nil:
		return nil, nil, err
	case fi.IsDir():
		return nil, fi, errIsDir
	case !fi.Mode().IsRegular():
		return nil, fi, errNotRegular
	case fi.Size() > limit:
		return nil, fi, errTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, fi, err
	}
	if int64(len(data)) > limit {
		return nil, fi, errTooLarge
	}
	return data, fi, nil
}

// tempName is a hidden sibling name for a temporary or backup file. The
// names are not secrets (O_EXCL settles collisions); they only have to be
// unlikely to meet a file of the project.
func tempName(dir, kind string) string {
	var b [8]byte
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	return path.Join(dir, ".geturl-"+kind+"-"+hex.EncodeToString(b[:]))
}

// dir is one directory of the project, opened through the project root on
// its first use and held from then on: the steps of a write (temporary
// file, rename or link, removal of the temporary or backup file) all name
// their files relative to that one descriptor. A path is looked up again
// for every operation, so a directory swapped for a symlink between two
// steps would split them: the temporary file made in the directory, its
// rename or removal refused through the link, the file left behind. The
// descriptor keeps every step in the directory the first one used,
// wherever it has been moved since.
//
// It is opened on first use rather than at once so that whatever precedes
// that use (the test hook of the step) happens first.
type dir struct {
	f   *fsys
	rel string // root-relative, "." for the root
	r   *os.Root
	err error
}

// dir returns the directory rel, not opened yet; close it after use.
func (f *fsys) dir(rel string) *dir { return &dir{f: f, rel: rel} }

func (d *dir) root() (*os.Root, error) {
	if d.r == nil && d.err == nil {
		d.r, d.err = d.f.root.OpenRoot(d.rel)
	}
	return d.r, d.err
}

func (d *dir) close() {
	if d.r != nil {
		d.r.Close()
		d.r = nil
	}
}

// path is name's root-relative path, for the test hook.
func (d *dir) path(name string) string { return path.Join(d.rel, name) }

// readRegular is fsys.readRegular of the file name in d.
func (d *dir) readRegular(name string, limit int64) ([]byte, fs.FileInfo, error) {
	r, err := d.root()
	if err != nil {
		return nil, nil, err
	}
	return readRegular(r, name, limit)
}

// writeTemp writes data to a new hidden file in d and fsyncs it; it
// returns its name. keep: give it perm exactly (an existing file's
// permission bits); otherwise it is created 0666 and the process umask
// decides, as a shell redirect would.
func (d *dir) writeTemp(data []byte, perm fs.FileMode, keep bool) (string, error) {
	r, err := d.root()
	if err != nil {
		return "", err
	}
	create := fs.FileMode(0o666)
	if keep {
		create = 0o600 // widened by the Chmod below, never readable by others before
	}
	var fh *os.File
	var tmp string
	for range 4 {
		tmp = tempName("", "tmp")
		fh, err = r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, create)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", err
	}
	if err := fill(r, fh, tmp, data, perm, keep); err != nil {
		return "", err
	}
	return tmp, nil
}

// writeAs is writeTemp to the new file name, chosen by the caller.
func (d *dir) writeAs(name string, data []byte, perm fs.FileMode, keep bool) error {
	r, err := d.root()
	if err != nil {
		return err
	}
	return writeNew(r, name, data, perm, keep)
}

// writeAs writes the new file name at the project root (the crash log).
func (f *fsys) writeAs(name string, data []byte, perm fs.FileMode, keep bool) error {
	return writeNew(f.root, name, data, perm, keep)
}

func writeNew(r *os.Root, name string, data []byte, perm fs.FileMode, keep bool) error {
	create := fs.FileMode(0o666)
	if keep {
		create = 0o600
	}
	fh, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, create)
	if err != nil {
		return err
	}
	return fill(r, fh, name, data, perm, keep)
}

// fill writes, fsyncs and closes the new file fh at name in r, removing it
// on failure.
func fill(r *os.Root, fh *os.File, name string, data []byte, perm fs.FileMode, keep bool) error {
	fail := func(err error) error {
		fh.Close()
		r.Remove(name)
		return err
	}
	if _, err := fh.Write(data); err != nil {
		return fail(err)
	}
	if keep {
		if err := fh.Chmod(perm); err != nil {
			return fail(err)
		}
	}
	if err := fh.Sync(); err != nil {
		return fail(err)
	}
	if err := fh.Close(); err != nil {
		r.Remove(name)
		return err
	}
	return nil
}

// replace atomically replaces (or creates) name in d with data: temp file
// in the same directory, fsync, rename. A reader sees the old bytes or the
// new, never a mix. The rename replaces whatever is at name, never writing
// through it, and breaks hard links (the other names keep the old bytes).
func (d *dir) replace(name string, data []byte, perm fs.FileMode, keep bool) error {
	if err := d.f.step("write", d.path(name)); err != nil {
		return err
	}
	tmp, err := d.writeTemp(data, perm, keep)
	if err != nil {
		return err
	}
	if err := d.f.step("rename", d.path(name)); err != nil {
		d.r.Remove(tmp)
		return err
	}
	if err := d.r.Rename(tmp, name); err != nil {
		d.r.Remove(tmp)
		return err
	}
	return nil
}

// create makes name in d with data only if nothing is there: the finished
// temp file is hard-linked into place, which fails rather than replaces
// when a file appeared since the check. Filesystems without hard links
// fall back to a rename. perm and keep are as for writeTemp.
func (d *dir) create(name string, data []byte, perm fs.FileMode, keep bool) error {
	if err := d.f.step("write", d.path(name)); err != nil {
		return err
	}
	tmp, err := d.writeTemp(data, perm, keep)
	if err != nil {
		return err
	}
	defer d.r.Remove(tmp)
	if err := d.f.step("rename", d.path(name)); err != nil {
		return err
	}
	err = d.r.Link(tmp, name)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrExist):
		return err
	}
	if _, lerr := d.r.Lstat(name); lerr == nil {
		return fs.ErrExist
	}
	return d.r.Rename(tmp, name)
}

// sync fsyncs d so the renames in it survive a crash. Some filesystems
// refuse to fsync a directory; that costs durability only.
func (d *dir) sync() {
	r, err := d.root()
	if err != nil {
		return
	}
	if fh, err := r.Open("."); err == nil {
		fh.Sync()
		fh.Close()
	}
}

// mkdirs creates the missing directories above rel (0777 less the umask),
// returning those it created, shallowest first.
func (f *fsys) mkdirs(rel string) ([]string, error) {
	var missing []string
	for dir := path.Dir(rel); dir != "." && dir != "/"; dir = path.Dir(dir) {
		fi, err := f.root.Lstat(dir)
		if err == nil {
			if !fi.IsDir() {
				return nil, syscall.ENOTDIR
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, dir)
	}
	var created []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := f.step("mkdir", missing[i]); err != nil {
			f.rmdirs(created)
			return nil, err
		}
		err := f.root.Mkdir(missing[i], 0o777)
		switch {
		case err == nil:
			created = append(created, missing[i])
		case errors.Is(err, fs.ErrExist): // made by someone else meanwhile: not ours to remove
		default:
			f.rmdirs(created)
			return nil, err
		}
	}
	return created, nil
}

// missingDirs are the directories mkdirs would make for rel, shallowest
// first.
func (f *fsys) missingDirs(rel string) []string {
	var missing []string
	for dir := path.Dir(rel); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if _, err := f.root.Lstat(dir); err == nil {
			break
		}
		missing = append([]string{dir}, missing...)
	}
	return missing
}

// rmdirs removes directories mkdirs created, deepest first, as long as they
// are empty; it reports the first failure.
func (f *fsys) rmdirs(created []string) error {
	var first error
	for i := len(created) - 1; i >= 0; i-- {
		if err := f.root.Remove(created[i]); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = err
		}
	}
	return first
}

// syncDir fsyncs a directory so the renames in it survive a crash. Some
// filesystems refuse to fsync a directory; that costs durability only.
func (f *fsys) syncDir(dir string) {
	d, err := f.root.Open(dir)
	if err != nil {
		return
	}
	d.Sync()
	d.Close()
}
