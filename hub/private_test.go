//go:build unix

package hub

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// nobodyUID is the uid planted files are given when the test runs as root.
const nobodyUID = 65534

// asAnotherUser makes the owner check see every file as someone else's:
// as root by chowning path to nobody, otherwise by pretending to be
// another uid (a wrong owner cannot be made without root).
func asAnotherUser(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() == 0 {
		if err := os.Lchown(path, nobodyUID, nobodyUID); err != nil {
			t.Fatal(err)
		}
		return
	}
	me := os.Geteuid()
	ownerUID = func() int { return me + 1 }
	t.Cleanup(func() { ownerUID = os.Geteuid })
}

func wantUnsafe(t *testing.T, err error, parts ...string) {
	t.Helper()
	var ue *UnsafeFileError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnsafeFile) {
		t.Fatalf("err = %v, want an UnsafeFileError", err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("err = %q, want it to mention %q", err, p)
		}
	}
}

// TestReadPrivateFileRefusesWhatOthersCouldPlantOrRead is issue 15 rows
// 6–8 for key files: real planted files and links in a temp dir.
func TestReadPrivateFileRefusesWhatOthersCouldPlantOrRead(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "hub.json")
	if err := os.WriteFile(key, []byte(`{"key":"k"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadPrivateFile(key, 1<<10); err != nil || string(b) != `{"key":"k"}` {
		t.Fatalf("a private key file: %q, %v", b, err)
	}
	os.Chmod(key, 0o644)
	_, err := ReadPrivateFile(key, 1<<10)
	wantUnsafe(t, err, key, "mode 0644", "it holds a key", "chmod 600 "+key)
	os.Chmod(key, 0o620)
	_, err = ReadPrivateFile(key, 1<<10)
	wantUnsafe(t, err, "mode 0620", "must not be group- or world-writable")
	os.Chmod(key, 0o600)

	// A symlink to a file of ours is still refused: whoever made the link
	// chose what we read.
	link := filepath.Join(dir, "link.json")
	os.Symlink(key, link)
	_, err = ReadPrivateFile(link, 1<<10)
	wantUnsafe(t, err, link, "symbolic link", "rm "+link)

	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = ReadPrivateFile(fifo, 1<<10) // must not block
	wantUnsafe(t, err, "not a regular file")

	if _, err := ReadPrivateFile(key, 3); err == nil || !strings.Contains(err.Error(), "larger than 3 bytes") {
		t.Fatalf("oversized file: %v", err)
	}
	if _, err := ReadPrivateFile(filepath.Join(dir, "missing"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}

	asAnotherUser(t, key)
	_, err = ReadPrivateFile(key, 1<<10)
	wantUnsafe(t, err, key, "is owned by uid", "not by you")
}

// TestOpenPrivateForWriting is the log file's case (row 7): a planted
// symlink is never followed, so nothing is appended to or created at its
// target, and a file that others can write is refused. A readable one is
// fine (not a key): the caller tightens it.
func TestOpenPrivateForWriting(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o600)
	log := filepath.Join(dir, "hub.log")
	os.Symlink(victim, log)
	_, err := OpenPrivate(log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600, false)
	wantUnsafe(t, err, "symbolic link")
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("the link target was written: %q", b)
	}
	dangling := filepath.Join(dir, "dangling.log")
	os.Symlink(filepath.Join(dir, "created-through-link"), dangling)
	_, err = OpenPrivate(dangling, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600, false)
	wantUnsafe(t, err, "symbolic link")
	if _, err := os.Lstat(filepath.Join(dir, "created-through-link")); err == nil {
		t.Fatal("a file was created through a dangling link")
	}

	os.Remove(log)
	f, err := OpenPrivate(log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600, false)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	os.Chmod(log, 0o644)
	if f, err = OpenPrivate(log, os.O_WRONLY|os.O_APPEND, 0, false); err != nil {
		t.Fatalf("a readable non-key file: %v", err)
	}
	f.Close()
	os.Chmod(log, 0o666)
	_, err = OpenPrivate(log, os.O_WRONLY|os.O_APPEND, 0, false)
	wantUnsafe(t, err, "mode 0666")
}

// TestEnsurePrivateDirRefusesLinksOwnersAndWritableDirs is row 6 for the
// state dir: a symlink to a directory (someone else's, or even ours) is
// refused, as is a directory others can write or one another user owns; a
// merely readable one is tightened to 0700.
func TestEnsurePrivateDirRefusesLinksOwnersAndWritableDirs(t *testing.T) {
	root := t.TempDir()
	elsewhere := filepath.Join(root, "attacker")
	os.Mkdir(elsewhere, 0o700)
	state := filepath.Join(root, "state")
	os.Symlink(elsewhere, state)
	wantUnsafe(t, EnsurePrivateDir(state), state, "symbolic link")

	dangling := filepath.Join(root, "dangling")
	os.Symlink(filepath.Join(root, "nowhere"), dangling)
	wantUnsafe(t, EnsurePrivateDir(dangling), "symbolic link")
	if _, err := os.Stat(filepath.Join(root, "nowhere")); err == nil {
		t.Fatal("a directory was created through a dangling link")
	}

	loose := filepath.Join(root, "loose")
	os.Mkdir(loose, 0o755)
	os.Chmod(loose, 0o755)
	if err := EnsurePrivateDir(loose); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(loose); fi.Mode().Perm() != 0o700 {
		t.Fatalf("readable dir not tightened: %v", fi.Mode().Perm())
	}
	os.Chmod(loose, 0o777)
	wantUnsafe(t, EnsurePrivateDir(loose), "mode 0777", "chmod 700 "+loose)

	file := filepath.Join(root, "file")
	os.WriteFile(file, nil, 0o600)
	if err := EnsurePrivateDir(file); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("a file where the dir should be: %v", err)
	}

	fresh := filepath.Join(root, "a", "b")
	if err := EnsurePrivateDir(fresh); err != nil {
		t.Fatal(err)
	}
	os.Chmod(loose, 0o700)
	asAnotherUser(t, loose)
	wantUnsafe(t, EnsurePrivateDir(loose), "is owned by uid")
}

func TestCheckPrivateDirChangesNothing(t *testing.T) {
	root := t.TempDir()
	if err := CheckPrivateDir(filepath.Join(root, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing dir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "missing")); err == nil {
		t.Fatal("CheckPrivateDir created the dir")
	}
	loose := filepath.Join(root, "loose")
	os.Mkdir(loose, 0o755)
	os.Chmod(loose, 0o755)
	if err := CheckPrivateDir(loose); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(loose); fi.Mode().Perm() != 0o755 {
		t.Fatal("CheckPrivateDir changed the mode")
	}
	link := filepath.Join(root, "link")
	os.Symlink(loose, link)
	wantUnsafe(t, CheckPrivateDir(link), "symbolic link")
	// A file above the dir is the caller's plain path error, not "rm dir".
	os.WriteFile(filepath.Join(root, "file"), nil, 0o600)
	if err := CheckPrivateDir(filepath.Join(root, "file", "state")); err == nil || errors.Is(err, ErrUnsafeFile) {
		t.Fatalf("under a file: %v", err)
	}
}
