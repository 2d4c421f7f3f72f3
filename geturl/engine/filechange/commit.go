package filechange

import (
	"errors"
	"io/fs"
	"path"
	"strings"

	"github.com/hubdev/hub/geturl/fault"
)

// change is the net effect of a patch on one file.
type change struct {
	v    *vfile
	kind byte // 'c' create, 'r' replace, 'd' delete
}

// changes lists the net change of every file the preflight touched, in the
// order the patch first named them; files a patch left as they were (an
// update whose hunks change nothing, a file added then deleted) are not
// written at all.
func (pl *planner) changes() []change {
	var out []change
	for _, v := range pl.order {
		switch {
		case !v.dirty:
		case !v.exists && v.now:
			out = append(out, change{v, 'c'})
		case v.exists && !v.now:
			out = append(out, change{v, 'd'})
		case v.exists && v.now:
			if v.loaded && v.content == v.orig && !v.defaultPerm && v.perm == v.diskPerm {
				continue
			}
			out = append(out, change{v, 'r'})
		}
	}
	return out
}

// txn commits a patch's changes so that a failure part way leaves the
// project as it was: every step first records how to undo itself.
//
//   - create: missing parent directories are made, then the file is linked
//     into place (never over an existing file). Undo removes the file and
//     the directories it made (when empty).
//   - replace: the original is first hard-linked to a hidden backup name
//     beside it (a copy of its bytes and permission bits where hard links
//     are not supported), then the new bytes replace it atomically. Undo
//     renames the backup back over it: the very same inode, with its mode,
//     owner and times.
//   - delete: the original is renamed to a hidden backup name beside it.
//     Undo renames it back.
//
// Backups are removed once every step has succeeded. A patch of several
// files logs its steps first (txnlog.go), so one the process dies in the
// middle of is rolled back later.
type txn struct {
	f       *fsys
	undo    []undoStep
	backups []backupFile
	dirs    map[string]*dir // every directory a change was made in, held open (see dir)
	synced  map[string]bool // directories whose entries changed, to fsync
	written int
	baks    []string // the backup name of each change, chosen before the first
}

type undoStep struct {
	virtual string
	run     func() error
}

// backupFile is a backup name in the directory holding it.
type backupFile struct {
	d    *dir
	name string
}

// dir is the directory of rel, opened once per commit: every step of every
// change in it, and its undo, goes through the same descriptor.
func (tx *txn) dir(rel string) *dir {
	p := path.Dir(rel)
	d := tx.dirs[p]
	if d == nil {
		d = tx.f.dir(p)
		tx.dirs[p] = d
	}
	return d
}

func (tx *txn) close() {
	for _, d := range tx.dirs {
		d.close()
	}
}

func (tx *txn) touch(rel string) { tx.synced[path.Dir(rel)] = true }

func (tx *txn) apply(i int, c change) error {
	v, rel := c.v, c.v.t.rel
	d, name := tx.dir(rel), path.Base(rel)
	switch c.kind {
	case 'c':
		created, err := tx.f.mkdirs(rel)
		if err != nil {
			return err
		}
		if len(created) > 0 {
			tx.undo = append(tx.undo, undoStep{v.t.virtual, func() error {
				// Later changes, which may hold them open, are undone
				// already; a directory held open cannot be removed
				// everywhere.
				for _, cd := range created {
					if h := tx.dirs[cd]; h != nil {
						h.close()
					}
				}
				return tx.f.rmdirs(created)
			}})
			for _, cd := range created {
				tx.touch(cd)
			}
		}
		if err := d.create(name, []byte(v.content), v.perm, !v.defaultPerm); err != nil {
			return err
		}
		tx.undo = append(tx.undo, undoStep{v.t.virtual, func() error {
			if err := tx.f.step("restore", rel); err != nil {
				return err
			}
			r, err := d.root()
			if err != nil {
				return err
			}
			return r.Remove(name)
		}})
		tx.written += len(v.content)
	case 'r':
		bak, err := tx.backup(d, v, path.Base(tx.baks[i]))
		if err != nil {
			return err
		}
		tx.undo = append(tx.undo, undoStep{v.t.virtual, func() error { return tx.restore(d, bak, rel) }})
		if err := d.replace(name, []byte(v.content), v.perm, !v.defaultPerm); err != nil {
			return err
		}
		tx.written += len(v.content)
	case 'd':
		if err := tx.f.step("delete", rel); err != nil {
			return err
		}
		r, err := d.root()
		if err != nil {
			return err
		}
		bak := path.Base(tx.baks[i])
		if err := r.Rename(name, bak); err != nil {
			return err
		}
		tx.backups = append(tx.backups, backupFile{d, bak})
		tx.undo = append(tx.undo, undoStep{v.t.virtual, func() error { return tx.restore(d, bak, rel) }})
	}
	tx.touch(rel)
	return nil
}

// backup keeps the original of a file about to be replaced, as bak in the
// same directory d.
func (tx *txn) backup(d *dir, v *vfile, bak string) (string, error) {
	rel, name := v.t.rel, path.Base(v.t.rel)
	if err := tx.f.step("backup", rel); err != nil {
		return "", err
	}
	r, err := d.root()
	if err != nil {
		return "", err
	}
	err = tx.f.step("link", rel) // tests: a filesystem without hard links
	if err == nil {
		err = r.Link(name, bak)
	}
	if err == nil {
		tx.backups = append(tx.backups, backupFile{d, bak})
		return bak, nil
	}
	data := []byte(v.orig)
	if !v.loaded {
		var err error
		if data, _, err = d.readRegular(name, 1<<62); err != nil {
			return "", err
		}
	}
	if err := d.writeAs(bak, data, v.diskPerm, true); err != nil {
		return "", err
	}
	tx.backups = append(tx.backups, backupFile{d, bak})
	return bak, nil
}

// restore puts the backup bak in d back at rel. When the backup is a hard
// link to the file still there, rename does nothing; the backup is then
// removed.
func (tx *txn) restore(d *dir, bak, rel string) error {
	if err := tx.f.step("restore", rel); err != nil {
		return err
	}
	r, err := d.root()
	if err != nil {
		return err
	}
	if err := r.Rename(bak, path.Base(rel)); err != nil {
		return err
	}
	if err := r.Remove(bak); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// rollback undoes the steps taken, newest first, and returns the virtual
// paths it could not restore.
func (tx *txn) rollback() []string {
	var failed []string
	for i := len(tx.undo) - 1; i >= 0; i-- {
		if err := tx.undo[i].run(); err != nil {
			failed = append(failed, tx.undo[i].virtual)
		}
	}
	return failed
}

// finish drops the backups and makes the renames durable.
func (tx *txn) finish() {
	for _, b := range tx.backups {
		if r, err := b.d.root(); err == nil {
			r.Remove(b.name)
		}
	}
	for p := range tx.synced {
		if d := tx.dirs[p]; d != nil {
			d.sync()
		} else {
			tx.f.syncDir(p)
		}
	}
}

// logged is the log of the changes before any is made: each one's
// backup name, and what a create will make.
func (tx *txn) logged(changes []change) *txnLog {
	l := &txnLog{}
	for _, c := range changes {
		rel := c.v.t.rel
		s := txnStep{Rel: rel, Bak: tx.baks[len(l.Steps)]}
		switch c.kind {
		case 'c':
			s.Kind, s.Bak, s.Sum, s.Dirs = "create", "", digest(c.v.content), tx.f.missingDirs(rel)
		case 'r':
			s.Kind = "replace"
		case 'd':
			s.Kind = "delete"
		}
		l.Steps = append(l.Steps, s)
	}
	return l
}

// commit performs the changes, or none of them.
func commit(f *fsys, changes []change) (int, *fault.Error) {
	tx := &txn{f: f, dirs: make(map[string]*dir), synced: make(map[string]bool)}
	defer tx.close()
	for _, c := range changes {
		tx.baks = append(tx.baks, tempName(path.Dir(c.v.t.rel), "bak"))
	}
	var log *txnLog
	if len(changes) > 1 {
		log = tx.logged(changes)
		if err := f.writeLog(log); err != nil {
			return 0, tx.fail(changes[0], err, nil)
		}
	}
	for i, c := range changes {
		if err := tx.apply(i, c); err != nil {
			return 0, tx.fail(c, err, log)
		}
	}
	if log != nil {
		// The commit point: from here a crash keeps the patch, and only
		// its backups are left to remove. Failing to mark it is failing
		// the patch: the backups are all still there.
		if err := f.commitLog(); err != nil {
			return 0, tx.fail(changes[len(changes)-1], err, log)
		}
	}
	f.step("finish", ".") // tests: a crash after the commit point
	tx.finish()
	if log != nil {
		f.root.Remove(txnDoneName) // a crash before this only leaves it to recovery
	}
	return tx.written, nil
}

// fail rolls back the steps taken after c failed with err, drops the log
// once nothing of the patch is left, and says what happened.
func (tx *txn) fail(c change, err error, log *txnLog) *fault.Error {
	cause := ioFailure(c.v.t.virtual, opName(c.kind), err)
	if failed := tx.rollback(); len(failed) > 0 {
		// the log stays: the next mutation, or geturl's next start,
		// tries again to restore what this could not
		e := refusal(CodeRollbackIncomplete, cause.Detail+"; the rollback could not restore "+strings.Join(failed, ", "),
			"inspect those files (a .geturl-bak-* file beside each holds its previous version) before retrying", "", false)
		return e.With("path", c.v.t.virtual).With("failedCode", cause.Code).With("notRestored", failed)
	}
	if log != nil {
		tx.f.dropLog()
	}
	cause.Detail += "; every change of the patch was rolled back"
	// Keep what the cause says to do: "retry later" only for a failure
	// that can pass by itself.
	switch {
	case cause.Hint != "":
		cause.Hint = "nothing was changed; " + cause.Hint
	case cause.Retryable:
		cause.Hint = "nothing was changed; retry later"
	default:
		cause.Hint = "nothing was changed"
	}
	return cause.With("rolledBack", true)
}

func opName(kind byte) string {
	switch kind {
	case 'c':
		return "create"
	case 'd':
		return "delete"
	}
	return "write"
}
