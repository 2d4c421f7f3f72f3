package mutate

import (
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"syscall"

	"github.com/hubdev/hub/geturl/sandbox"
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

// readRegular reads the regular file at rel, refusing directories, special
// files and files over limit bytes. O_NONBLOCK: opening a FIFO must not
// wait for a writer.
func (f *fsys) readRegular(rel string, limit int64) ([]byte, fs.FileInfo, error) {
	fh, err := f.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
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

// writeTemp writes data to a new hidden file beside rel and fsyncs it.
// keep: give it perm exactly (an existing file's permission bits);
// otherwise it is created 0666 and the process umask decides, as a shell
// redirect would.
func (f *fsys) writeTemp(rel string, data []byte, perm fs.FileMode, keep bool) (string, error) {
	create := fs.FileMode(0o666)
	if keep {
		create = 0o600 // widened by the Chmod below, never readable by others before
	}
	var fh *os.File
	var tmp string
	var err error
	for range 4 {
		tmp = tempName(path.Dir(rel), "tmp")
		fh, err = f.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, create)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", err
	}
	if err := f.fill(fh, tmp, data, perm, keep); err != nil {
		return "", err
	}
	return tmp, nil
}

// writeAs is writeTemp to the new file name, chosen by the caller.
func (f *fsys) writeAs(name string, data []byte, perm fs.FileMode, keep bool) error {
	create := fs.FileMode(0o666)
	if keep {
		create = 0o600
	}
	fh, err := f.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, create)
	if err != nil {
		return err
	}
	return f.fill(fh, name, data, perm, keep)
}

// fill writes, fsyncs and closes the new file fh at name, removing it on
// failure.
func (f *fsys) fill(fh *os.File, name string, data []byte, perm fs.FileMode, keep bool) error {
	tmp := name
	fail := func(err error) error {
		fh.Close()
		f.root.Remove(tmp)
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
		f.root.Remove(tmp)
		return err
	}
	return nil
}

// replace atomically replaces (or creates) rel with data: temp file in the
// same directory, fsync, rename. A reader sees the old bytes or the new,
// never a mix. The rename replaces whatever name is at rel, never writing
// through it, and breaks hard links (the other names keep the old bytes).
func (f *fsys) replace(rel string, data []byte, perm fs.FileMode, keep bool) error {
	if err := f.step("write", rel); err != nil {
		return err
	}
	tmp, err := f.writeTemp(rel, data, perm, keep)
	if err != nil {
		return err
	}
	if err := f.step("rename", rel); err != nil {
		f.root.Remove(tmp)
		return err
	}
	if err := f.root.Rename(tmp, rel); err != nil {
		f.root.Remove(tmp)
		return err
	}
	return nil
}

// create makes rel with data only if nothing is there: the finished temp
// file is hard-linked into place, which fails rather than replaces when a
// file appeared since the check. Filesystems without hard links fall back
// to a rename. perm and keep are as for writeTemp.
func (f *fsys) create(rel string, data []byte, perm fs.FileMode, keep bool) error {
	if err := f.step("write", rel); err != nil {
		return err
	}
	tmp, err := f.writeTemp(rel, data, perm, keep)
	if err != nil {
		return err
	}
	defer f.root.Remove(tmp)
	if err := f.step("rename", rel); err != nil {
		return err
	}
	err = f.root.Link(tmp, rel)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrExist):
		return err
	}
	if _, lerr := f.root.Lstat(rel); lerr == nil {
		return fs.ErrExist
	}
	return f.root.Rename(tmp, rel)
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
