package terminal

import (
	"strings"
	"testing"
)

// The Windows spawn plan: cmd.exe with AutoRun and delayed expansion off,
// the command between the two quotes /s removes, byte for byte.
func TestCmdLine(t *testing.T) {
	for _, tc := range []struct{ shell, cmd, want string }{
		{`C:\Windows\System32\cmd.exe`, `go test ./...`, `C:\Windows\System32\cmd.exe /d /v:off /s /c "go test ./..."`},
		{`C:\Windows\System32\cmd.exe`, `echo "a b" & dir "C:\x y\"`, `C:\Windows\System32\cmd.exe /d /v:off /s /c "echo "a b" & dir "C:\x y\""`},
		{`C:\Windows\System32\cmd.exe`, `git log --format="%H" -- "dir\\"`, `C:\Windows\System32\cmd.exe /d /v:off /s /c "git log --format="%H" -- "dir\\""`},
		{`D:\My Tools\cmd.exe`, `ver`, `"D:\My Tools\cmd.exe" /d /v:off /s /c "ver"`},
		{`C:\Windows\System32\cmd.exe`, `"C:\Program Files\nodejs\node.exe" -e "console.log(1)"`, `C:\Windows\System32\cmd.exe /d /v:off /s /c ""C:\Program Files\nodejs\node.exe" -e "console.log(1)""`},
	} {
		if got := cmdLine(tc.shell, tc.cmd); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.cmd, got, tc.want)
		}
	}
	if cmdLineRefusal("a\nb") == "" || cmdLineRefusal("a\rb") == "" || cmdLineRefusal(`a & b`) != "" {
		t.Fatal("cmdLineRefusal")
	}
}

// A Manager whose shell is cmd.exe refuses what cmd could not run as
// given, before anything runs: a line break, or more than cmd reads.
func TestCmdLimits(t *testing.T) {
	f := newFixture(t, Config{Shell: `C:\Windows\System32\cmd.exe`})
	if got := f.m.Config().MaxCommand; got != cmdMaxCommand {
		t.Fatalf("MaxCommand %d, want %d", got, cmdMaxCommand)
	}
	if _, e := f.r.prepare(Request{Command: "echo a\necho b"}); e == nil || e.Code != CodeInvalidCommand {
		t.Fatalf("a line break: %+v", e)
	}
	long := make([]byte, cmdMaxCommand+1)
	for i := range long {
		long[i] = 'x'
	}
	if _, e := f.r.prepare(Request{Command: string(long)}); e == nil || e.Code != CodeCommandTooLong {
		t.Fatalf("too long: %+v", e)
	}
}

// The background limit's hint names the way the shell's own commands end
// a background process: kill of the group under sh, taskkill /t under cmd.
func TestBackgroundLimitHintPerShell(t *testing.T) {
	for shell, want := range map[string]string{"/bin/sh": "kill -- -PID", `C:\Windows\System32\cmd.exe`: "taskkill /t /f /pid PID"} {
		f := newFixture(t, Config{Shell: shell, MaxBackground: 1})
		if e := f.r.reserve(); e != nil {
			t.Fatal(e)
		}
		e := f.r.reserve()
		if e == nil || e.Code != CodeBackgroundLimit || !strings.Contains(e.Hint, want) {
			t.Fatalf("%s: %+v", shell, e)
		}
		f.r.unreserve()
	}
}
