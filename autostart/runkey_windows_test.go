package autostart

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"
)

// TestRunKeyRegistry writes, reads and removes a value through the real
// registry calls, under a scratch key of HKEY_CURRENT_USER (never the
// user's Run key), which it deletes afterwards.
func TestRunKeyRegistry(t *testing.T) {
	path := `Software\hubdev-hub-autostart-test`
	t.Cleanup(func() { registry.DeleteKey(registry.CURRENT_USER, path) })
	s := runKey{path: path, name: Label}
	if _, err := s.Read(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Read before: %v", err)
	}
	if err := s.Remove(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Remove before: %v", err)
	}
	m := New(RunKey, s, nil)
	exe := `C:\Program Files\hub é\hub.exe`
	if changed, err := m.Enable(Entry{Exe: exe, Config: `C:\Users\me\100% sure\hub.yaml`}); err != nil || !changed {
		t.Fatalf("Enable: %v, %v", changed, err)
	}
	k, err := registry.OpenKey(registry.CURRENT_USER, path, registry.QUERY_VALUE)
	if err != nil {
		t.Fatal(err)
	}
	v, typ, err := k.GetStringValue(Label)
	k.Close()
	want := `"C:\Program Files\hub é\hub.exe" start --config "C:\Users\me\100% sure\hub.yaml"`
	if err != nil || typ != registry.SZ || v != want {
		t.Errorf("value %q (type %d), %v; want REG_SZ %q", v, typ, err, want)
	}
	if changed, err := m.Enable(Entry{Exe: exe, Config: `C:\Users\me\100% sure\hub.yaml`}); err != nil || changed {
		t.Errorf("second Enable: %v, %v", changed, err)
	}
	if st, err := m.Status(exe); err != nil || !st.Enabled || !st.Current {
		t.Errorf("Status: %+v, %v", st, err)
	}
	if removed, err := m.Disable(); err != nil || !removed {
		t.Fatalf("Disable: %v, %v", removed, err)
	}
	if removed, err := m.Disable(); err != nil || removed {
		t.Errorf("second Disable: %v, %v", removed, err)
	}
}

// runKeyArgvs are argument lists whose Run command lines need every
// quoting rule.
var runKeyArgvs = [][]string{
	{"start"},
	{"start", "--config", `C:\Users\José\my hub\hub.yaml`},
	{"start", "--config", `C:\a "q".yaml`},
	{"start", "--config", `C:\a\"q".yaml`},
	{"start", "--config", `C:\dir with space\`},
	{"start", "--config", `C:\%USERPROFILE%\日本語 🚀.yaml`},
	{"start", ""},
}

// TestRunKeyWindowsReads compares renderRunKey with Windows itself:
// CommandLineToArgvW splits each command line into the arguments meant,
// and a program started with it as its command line (how a Run value is
// run), from a folder with a space and an accent, gets them in os.Args.
func TestRunKeyWindowsReads(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "dir with space é")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "hub.exe")
	copyFile(t, self, exe)
	for _, args := range runKeyArgvs {
		argv := append([]string{exe}, args...)
		line, err := renderRunKey(argv)
		if err != nil {
			t.Fatalf("%q: %v", argv, err)
		}
		split, err := windows.DecomposeCommandLine(line)
		if err != nil || !slices.Equal(split, argv) {
			t.Errorf("CommandLineToArgvW(%s) = %q, %v; want %q", line, split, err, argv)
		}
		out := filepath.Join(t.TempDir(), "argv.json")
		p, err := os.StartProcess(exe, []string{exe}, &os.ProcAttr{
			Env:   append(os.Environ(), argvDumpEnv+"="+out),
			Files: []*os.File{nil, os.Stdout, os.Stderr},
			Sys:   &syscall.SysProcAttr{CmdLine: line},
		})
		if err != nil {
			t.Fatal(err)
		}
		if st, err := p.Wait(); err != nil || !st.Success() {
			t.Fatalf("%s: %v %v", line, st, err)
		}
		var got []string
		b, err := os.ReadFile(out)
		if err == nil {
			err = json.Unmarshal(b, &got)
		}
		if err != nil || !slices.Equal(got, argv) {
			t.Errorf("started with %s, os.Args = %q, %v; want %q", line, got, err, argv)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
