package filechange

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

// A patch of several files writes a log of its steps before its first
// change, so that one cut short by a crash (kill -9, power loss) is rolled
// back on the project's next mutation, or when geturl starts, instead of
// staying half applied with its backups lying about. The log is a hidden
// file at the project root, written atomically:
//
//   - before the first change: every step, with the backup name each will
//     use (a create records its content's digest and the directories it
//     will make);
//   - once every change is made: renamed to txnDoneName, the commit point
//     (one rename and a directory fsync, not a second write);
//   - once the backups are gone: removed.
//
// The log carries a MAC of its steps under the process's LogKey, and
// recovery follows no log without a valid one: a log is a file in the
// project, so the project itself (a cloned repository) can bring one.
//
// Recovery of a log undoes each step that left a trace, newest first: a
// backup is put back, a created file whose bytes are the logged ones is
// removed, with its directories when empty. A done log only loses its
// leftover backups. Temporary files beside the touched files go either
// way. A single-file change needs none of this: its one rename is the
// change.
const (
	txnLogName  = ".geturl-txn.json"
	txnDoneName = ".geturl-txn.done.json"
)

// maxTxnLog bounds the log read back (a patch names at most a few
// thousand files).
const maxTxnLog = 16 << 20

type txnLog struct {
	Steps []txnStep
}

// txnLogVersion is the format of signed logs (1 was unsigned: refused).
const txnLogVersion = 2

// txnLogFile is a log as stored: its steps exactly as signed.
type txnLogFile struct {
	V     int             `json:"v"`
	MAC   string          `json:"mac"`
	Steps json.RawMessage `json:"steps"`
}

type txnStep struct {
	Kind string   `json:"kind"` // "create", "replace" or "delete"
	Rel  string   `json:"rel"`
	Bak  string   `json:"bak,omitempty"`  // replace, delete: the original's backup
	Dirs []string `json:"dirs,omitempty"` // create: directories it makes, shallowest first
	Sum  string   `json:"sum,omitempty"`  // create: SHA-256 of the bytes
}

// txnLogTemp is where the log is written before it is renamed into
// place: a fixed name, so what a crash leaves of it is found and removed.
const txnLogTemp = txnLogName + ".tmp"

// writeLog puts l, signed, at the project root atomically and durably.
func (f *fsys) writeLog(l *txnLog) error {
	steps, err := json.Marshal(l.Steps)
	if err != nil {
		return err
	}
	b, err := json.Marshal(txnLogFile{V: txnLogVersion, MAC: f.key.sign(steps), Steps: steps})
	if err != nil {
		return err
	}
	if err := f.step("write", txnLogName); err != nil {
		return err
	}
	f.root.Remove(txnLogTemp)
	if err := f.writeAs(txnLogTemp, b, 0o600, true); err != nil {
		return err
	}
	if err := f.step("rename", txnLogName); err != nil {
		f.root.Remove(txnLogTemp)
		return err
	}
	if err := f.root.Rename(txnLogTemp, txnLogName); err != nil {
		f.root.Remove(txnLogTemp)
		return err
	}
	f.syncDir(".")
	return nil
}

// dropLog removes the log of a patch rolled back whole.
func (f *fsys) dropLog() {
	if err := f.root.Remove(txnLogName); err == nil {
		f.syncDir(".")
	}
}

// commitLog marks every change made: from here a crash keeps the patch.
func (f *fsys) commitLog() error {
	if err := f.step("rename", txnDoneName); err != nil {
		return err
	}
	if err := f.root.Rename(txnLogName, txnDoneName); err != nil {
		return err
	}
	f.syncDir(".")
	return nil
}

func digest(data string) string {
	h := sha256.Sum256([]byte(data))
	return hex.EncodeToString(h[:])
}

// ownName is a name only this engine makes: a backup or temporary file.
var ownName = regexp.MustCompile(`^\.geturl-(bak|tmp)-[0-9a-f]{16}$`)

// validStep refuses a log entry this engine could not have written: a
// log is a file in the project, and is only ever followed within it.
func validStep(s txnStep) bool {
	clean := func(p string) bool {
		return p != "" && p == path.Clean(p) && !path.IsAbs(p) && p != "." && !strings.HasPrefix(p, "../")
	}
	if !clean(s.Rel) {
		return false
	}
	switch s.Kind {
	case "replace", "delete":
		// Undoing renames the backup to Rel. The engine never changes
		// version-control metadata, so a step that would came with the
		// log: a .git whose config runs commands at the next git status.
		_, vcs := sandbox.VCSComponent(s.Rel)
		return clean(s.Bak) && path.Dir(s.Bak) == path.Dir(s.Rel) && ownName.MatchString(path.Base(s.Bak)) && !vcs
	case "create":
		for _, d := range s.Dirs {
			if !clean(d) || !strings.HasPrefix(s.Rel, d+"/") {
				return false
			}
		}
		return len(s.Sum) == 64
	}
	return false
}

// recoverLog finishes or undoes a patch a crash cut short, if the project
// holds the log of one. It returns the paths (root-relative) it put back
// as they were before that patch; an error when the log cannot be read or
// a step cannot be undone (the log then stays, to be tried again).
func (f *fsys) recoverLog() (restored []string, err error) {
	f.root.Remove(txnLogTemp) // a log never put in place: nothing began
	name, committed := txnLogName, false
	data, _, err := f.readRegular(name, maxTxnLog)
	if errors.Is(err, fs.ErrNotExist) {
		name, committed = txnDoneName, true
		data, _, err = f.readRegular(name, maxTxnLog)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var lf txnLogFile
	var l txnLog
	if json.Unmarshal(data, &lf) != nil || lf.V != txnLogVersion || !f.key.verify(lf.Steps, lf.MAC) ||
		json.Unmarshal(lf.Steps, &l.Steps) != nil {
		return nil, fmt.Errorf("%s is not a log this geturl wrote (it was not signed with its key); move it aside", name)
	}
	for _, s := range l.Steps {
		if !validStep(s) {
			return nil, fmt.Errorf("%s names a step this geturl cannot have taken (%q); move it aside", name, s.Rel)
		}
	}
	var failed []string
	for i := len(l.Steps) - 1; i >= 0; i-- {
		s := l.Steps[i]
		if committed {
			if s.Bak != "" {
				f.root.Remove(s.Bak)
			}
			continue
		}
		did, err := f.undo(s)
		if err != nil {
			failed = append(failed, s.Rel)
		}
		if did {
			restored = append(restored, s.Rel)
		}
	}
	f.sweepTemps(l.Steps)
	if len(failed) > 0 {
		return restored, fmt.Errorf("cannot restore %s", strings.Join(failed, ", "))
	}
	if f.root.Remove(name) == nil {
		f.syncDir(".")
	}
	return restored, nil
}

// undo reverts one step if it left a trace; did reports whether it did.
func (f *fsys) undo(s txnStep) (did bool, err error) {
	switch s.Kind {
	case "replace", "delete":
		if _, err := f.root.Lstat(s.Bak); errors.Is(err, fs.ErrNotExist) {
			return false, nil // the step never began
		}
		if err := f.root.Rename(s.Bak, s.Rel); err != nil {
			return false, err
		}
		// a backup that was a hard link to the file still there: the
		// rename did nothing
		if err := f.root.Remove(s.Bak); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return true, err
		}
		return true, nil
	case "create":
		data, _, err := f.readRegular(s.Rel, 1<<30)
		if err == nil && digest(string(data)) == s.Sum {
			if err := f.root.Remove(s.Rel); err != nil {
				return false, err
			}
			did = true
		}
		for i := len(s.Dirs) - 1; i >= 0; i-- {
			f.root.Remove(s.Dirs[i]) // only when empty
		}
		return did, nil
	}
	return false, nil
}

// sweepTemps removes the temporary files an interrupted write left beside
// the files the patch touched (nothing else makes such names).
func (f *fsys) sweepTemps(steps []txnStep) {
	seen := map[string]bool{}
	for _, s := range steps {
		dir := path.Dir(s.Rel)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		entries, err := fs.ReadDir(f.root.FS(), dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if n := e.Name(); strings.HasPrefix(n, ".geturl-tmp-") && ownName.MatchString(n) {
				f.root.Remove(path.Join(dir, n))
			}
		}
	}
}

// Recover rolls back a patch a crash cut short in the project at root, if
// one was (see txnLog) and key signed its log; geturl calls it for every
// project when it starts. It returns the root-relative paths it restored.
func Recover(root string, key *LogKey) ([]string, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	f := &fsys{root: r, key: key}
	defer f.close()
	return f.recoverLog()
}
