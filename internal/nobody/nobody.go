// Package nobody runs a test's helper processes as the local user nobody:
// the second local user of the threat model, whom the kernel's checks (port
// ownership, ptrace, file modes) keep apart from us. As root those checks
// let everything through, so only a process of another user shows what the
// hub hides or refuses. Tests using it skip unless they run as root with
// setpriv and the user nobody at hand (CI does).
package nobody

import (
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
)

// User is nobody's uid and primary gid.
type User struct{ UID, GID int }

// Lookup returns nobody, skipping the test when it cannot run processes
// as nobody.
func Lookup(t testing.TB) User {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run processes as the user nobody")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv (util-linux):", err)
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("needs the user nobody:", err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil || uid == 0 {
		t.Skipf("the user nobody has uid %q gid %q", u.Uid, u.Gid)
	}
	return User{UID: uid, GID: gid}
}

// Command runs bin with args as u, with no supplementary groups.
func (u User) Command(bin string, args ...string) *exec.Cmd {
	return exec.Command("setpriv", append([]string{"--reuid=" + strconv.Itoa(u.UID), "--regid=" + strconv.Itoa(u.GID),
		"--clear-groups", "--", bin}, args...)...)
}

// Binary copies the running test binary, as name, into a fresh directory
// nobody may enter (the go tool keeps the binary in a 0700 directory of
// ours), removed when the test ends; it returns the directory and the
// copy. A test binary whose TestMain has helper modes is how a test runs
// its own code as nobody.
func Binary(t testing.TB, name string) (dir, bin string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err = os.MkdirTemp("", "hub-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bin = filepath.Join(dir, name)
	dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, bin
}
