package hub

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"
)

// These run on Windows only (CI builds and vets them): the access list a
// file is created with, and what OpenPrivate refuses, on a real NTFS.

func TestOpenPrivateCreatesOwnerOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hub.json")
	f, err := OpenPrivate(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600, true)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, entries, err := readACL(path, windows.Handle(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	if p.Owner != p.Me || len(entries) != 1 || entries[0].SID != p.Me {
		t.Fatalf("owner %s, entries %+v; want only %s", p.Owner, entries, p.Me)
	}
	f.Close()
	if b, err := ReadPrivateFile(path, 10); err != nil || len(b) != 0 {
		t.Fatalf("reading it back: %q %v", b, err)
	}
}

func TestOpenPrivateRefusesOthersAccess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hub.json")
	f, err := OpenPrivate(path, os.O_RDWR|os.O_CREATE, 0o600, true)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	me, _ := currentSID()
	// Users (S-1-5-32-545) may read it: fine for a file, not for a key.
	setDACL(t, path, "D:P(A;;FA;;;"+me+")(A;;FR;;;S-1-5-32-545)")
	if _, err := ReadOwnFile(path, 10); err != nil {
		t.Fatalf("a readable non-key file: %v", err)
	}
	_, err = ReadPrivateFile(path, 10)
	wantUnsafeParts(t, err, path, "grants S-1-5-32-545 read access", "it holds a key")
	setDACL(t, path, "D:P(A;;FA;;;"+me+")(A;;FA;;;S-1-1-0)")
	_, err = ReadOwnFile(path, 10)
	wantUnsafeParts(t, err, "grants S-1-1-0 write access")
}

func TestOpenPrivateRefusesALink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious"), 0o600)
	link := filepath.Join(dir, "hub.log")
	if err := os.Symlink(victim, link); err != nil {
		t.Skip("cannot create a symbolic link here (needs developer mode or the privilege):", err)
	}
	_, err := OpenPrivate(link, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600, false)
	wantUnsafeParts(t, err, link, "symbolic link")
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Fatalf("the link's target was written: %q", b)
	}
}

func TestEnsurePrivateDirTightens(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	me, _ := currentSID()
	setDACL(t, dir, "D:P(A;OICI;FA;;;"+me+")(A;OICI;FR;;;S-1-5-32-545)")
	if err := EnsurePrivateDir(dir); err != nil {
		t.Fatal(err)
	}
	f, err := openPrivateDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, entries, _ := readACL(dir, windows.Handle(f.Fd())); othersMayRead(me, entries) {
		t.Fatalf("not tightened: %+v", entries)
	}
	setDACL(t, dir, "D:P(A;OICI;FA;;;"+me+")(A;OICI;FA;;;S-1-5-32-545)")
	wantUnsafeParts(t, EnsurePrivateDir(dir), "plant or replace files in it")
}

func setDACL(t *testing.T, path, sddl string) {
	t.Helper()
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		t.Fatal(err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		t.Fatal(err)
	}
	if err := windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
		t.Fatal(err)
	}
}
