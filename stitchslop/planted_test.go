package stitchslop

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlantedSessionFilesRefused is issue 15 rows 6–8 for the bridge's
// session file, which holds its control key: a copy readable by others,
// a symlink to a file of ours, or (as root) one owned by another user is
// refused with a message naming the file and the fix, so no shell command
// uses it.
func TestPlantedSessionFilesRefused(t *testing.T) {
	dir := t.TempDir()
	live := sessionFile{Port: 4000, Key: "k", PID: os.Getpid()}
	if err := writeSession(dir, live); err != nil {
		t.Fatal(err)
	}
	path := sessionPath(dir, 4000)
	os.Chmod(path, 0o644)
	scan := scanSessions(dir)
	if len(scan.Live) != 0 || len(scan.Bad) != 1 || !strings.Contains(scan.Bad[0], path+" is mode 0644; it holds a key") {
		t.Fatalf("a 0644 session file: %+v", scan)
	}
	var stderr bytes.Buffer
	c := &shellClient{ConfigDir: dir, Stderr: &stderr}
	if _, err := c.pickSession(); err == nil || !strings.Contains(stderr.String(), "chmod 600 "+path) {
		t.Fatalf("the shell used a 0644 session file (err %v, stderr %q)", err, stderr.String())
	}

	other := filepath.Join(t.TempDir(), "real.json")
	os.Rename(path, other)
	os.Chmod(other, 0o600)
	os.Symlink(other, path)
	if scan := scanSessions(dir); len(scan.Live) != 0 || len(scan.Bad) != 1 || !strings.Contains(scan.Bad[0], "symbolic link") {
		t.Fatalf("a symlinked session file: %+v", scan)
	}

	if os.Geteuid() == 0 {
		os.Remove(path)
		writeSession(dir, live)
		os.Chown(path, 65534, 65534)
		if scan := scanSessions(dir); len(scan.Live) != 0 || len(scan.Bad) != 1 || !strings.Contains(scan.Bad[0], "owned by uid 65534") {
			t.Fatalf("a session file of another user: %+v", scan)
		}
	}
}

// TestPairingFileLinkNotFollowed: a pairing.json planted as a symlink is
// neither chmod'ed through (its target keeps its mode) nor read.
func TestPairingFileLinkNotFollowed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf")
	os.Mkdir(dir, 0o700)
	target := filepath.Join(t.TempDir(), "someone-elses")
	os.WriteFile(target, []byte(`{"version":1,"origins":{}}`), 0o644)
	os.Chmod(target, 0o644)
	os.Symlink(target, filepath.Join(dir, pairingFileName))
	store := &pairingStore{dir: dir}
	if err := store.tightenMode(); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("tightenMode = %v", err)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o644 {
		t.Fatalf("the link's target was chmod'ed to %v", fi.Mode().Perm())
	}
	if _, err := store.load(); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("load = %v", err)
	}
}
