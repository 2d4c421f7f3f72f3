package terminal

import (
	"encoding/base64"
	"strings"
	"testing"
	"unicode/utf16"
)

// These tests only ever call CatastrophicCmd: nothing here runs a command.
// Each refused form is one that sh's rules (Catastrophic) let pass, so
// judging cmd.exe lines by sh's grammar, as the terminal did before it had
// a cmd dialect, misses every one (TestCmdFormsDifferFromSh).

func psEncoded(s string) string {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(u))
	for i, v := range u {
		b[2*i], b[2*i+1] = byte(v), byte(v>>8)
	}
	return base64.StdEncoding.EncodeToString(b)
}

var cmdRefused = []struct{ cmd, rule string }{
	{`rd /s /q C:\`, RuleRmRoot},
	{`RD /S /Q C:\`, RuleRmRoot},
	{`rmdir /s C:\`, RuleRmRoot},
	{`rd/s/q C:\`, RuleRmRoot},
	{`rd /s/q c:/`, RuleRmRoot},
	{`rd /s /q \`, RuleRmRoot},
	{`rd /s /q "C:\"`, RuleRmRoot},
	{`rd /s /q C:\.`, RuleRmRoot},
	{`rd /s /q C:\Windows`, RuleRmRoot},
	{`rd /s /q C:\Windows\System32`, RuleRmRoot},
	{`rd /s /q "C:\Program Files"`, RuleRmRoot},
	{`rd /s /q C:\Users\alice`, RuleRmRoot},
	{`rd /s /q %USERPROFILE%`, RuleRmRoot},
	{`rd /s /q %userprofile%\`, RuleRmRoot},
	{`rd /s /q %HOMEDRIVE%%HOMEPATH%`, RuleRmRoot},
	{`rd /s /q %SystemDrive%\`, RuleRmRoot},
	{`rd /s /q %SystemRoot%`, RuleRmRoot},
	{`rd /s /q %ProgramFiles%`, RuleRmRoot},
	{`rd /s /q %OUT%\`, RuleRmRoot},
	{`rd /s /q \\?\C:\`, RuleRmRoot},
	{`rd /s /q \\server\share`, RuleRmRoot},
	{`rd /s /q D:`, RuleRmRoot},
	{`r^d /s /q C:\`, RuleRmRoot},
	{`"rd" /s /q C:\`, RuleRmRoot},
	{`@rd /s /q C:\`, RuleRmRoot},
	{`C:\Windows\System32\cmd.exe /c rd /s /q C:\`, RuleRmRoot},
	{`del /f /s /q C:\*`, RuleRmRoot},
	{`del /f /s /q C:\*.*`, RuleRmRoot},
	{`erase /s C:\*`, RuleRmRoot},
	{`del /s /q %USERPROFILE%\*`, RuleRmRoot},
	{`echo hi & rd /s /q C:\`, RuleRmRoot},
	{`echo hi && rd /s /q C:\`, RuleRmRoot},
	{`dir || rd /s /q C:\`, RuleRmRoot},
	{`dir | rd /s /q C:\`, RuleRmRoot},
	{`(echo a & rd /s /q C:\)`, RuleRmRoot},
	{"echo a\r\nrd /s /q C:\\", RuleRmRoot},
	{`cd /d C:\ && rd /s /q .`, RuleRmRoot},
	{`cd \ & rd /s /q Windows`, RuleRmRoot},
	{`pushd C:\ & del /s /q *`, RuleRmRoot},
	{`D: & rd /s /q .`, RuleRmRoot},
	{`cmd /c rd /s /q C:\`, RuleRmRoot},
	{`cmd /s /c "rd /s /q C:\"`, RuleRmRoot},
	{`cmd.exe /d /c"rd /s /q C:\"`, RuleRmRoot},
	{`cmd /k rd /s /q C:\`, RuleRmRoot},
	{`start /b rd /s /q C:\`, RuleRmRoot},
	{`start "" /wait cmd /c rd /s /q C:\`, RuleRmRoot},
	{`call rd /s /q C:\`, RuleRmRoot},
	{`for %i in (1) do rd /s /q C:\`, RuleRmRoot},
	{`if exist C:\ rd /s /q C:\`, RuleRmRoot},
	{`if not "%X%"=="" rd /s /q C:\`, RuleRmRoot},
	{`rm -rf C:/`, RuleRmRoot},
	{`rm -rf /`, RuleRmRoot},
	{`rm -rf C:\Users\alice`, RuleRmRoot},
	{`rm --no-preserve-root -rf x`, RuleNoPreserveRoot},
	{`format C:`, RuleMkfs},
	{`format.com D: /q /y`, RuleMkfs},
	{`diskpart`, RuleMkfs},
	{`diskpart /s clean.txt`, RuleMkfs},
	{`cipher /w:C:\`, RuleDiskWrite},
	{`cipher /W:C`, RuleDiskWrite},
	{`echo x > \\.\PhysicalDrive0`, RuleDiskWrite},
	{`type img 1>\\.\C:`, RuleDiskWrite},
	{`reg delete HKLM\Software\Microsoft /f`, RuleRegistryDelete},
	{`reg delete "HKEY_LOCAL_MACHINE\SYSTEM\CurrentControlSet" /f`, RuleRegistryDelete},
	{`REG DELETE hkcr\.txt /f`, RuleRegistryDelete},
	{`reg delete HKCU\Software /f`, RuleRegistryDelete},
	{`reg delete \\pc\HKLM\Software /f`, RuleRegistryDelete},
	{`bcdedit /set {current} safeboot minimal`, RuleBootConfig},
	{`bcdedit /delete {current}`, RuleBootConfig},
	{`vssadmin delete shadows /all /quiet`, RuleShadowCopies},
	{`vssadmin Resize ShadowStorage /for=C: /on=C: /maxsize=401MB`, RuleShadowCopies},
	{`wmic shadowcopy delete`, RuleShadowCopies},
	{`wbadmin delete catalog -quiet`, RuleShadowCopies},
	{`takeown /f C:\ /r /d y`, RuleRecursiveChmod},
	{`takeown /F C:\Windows /R`, RuleRecursiveChmod},
	{`icacls C:\ /grant Everyone:(OI)(CI)F /t`, RuleRecursiveChmod},
	{`icacls C:\Windows /grant Everyone:F`, RuleRecursiveChmod},
	{`icacls "C:\Users\alice" /reset /t /c`, RuleRecursiveChmod},
	{`shutdown /s /t 0`, RulePower},
	{`shutdown -r -f`, RulePower},
	{`powershell -Command "Remove-Item -Recurse -Force C:\"`, RuleRmRoot},
	{`powershell Remove-Item C:\ -Recurse -Force`, RuleRmRoot},
	{`pwsh -NoProfile -c "rm -r -fo $env:USERPROFILE"`, RuleRmRoot},
	{`powershell -c "Remove-Item -Path 'C:\Windows' -Recurse"`, RuleRmRoot},
	{`powershell -c "ri -Path:C:\ -Recurse:$true"`, RuleRmRoot},
	{`powershell -c "Get-ChildItem C:\ | Remove-Item -Recurse -Force ~"`, RuleRmRoot},
	{`powershell -c "Set-Location C:\; Remove-Item * -Recurse"`, RuleRmRoot},
	{`powershell -c "Remove-Item ${env:SystemDrive}\ -Recurse"`, RuleRmRoot},
	{`powershell -c "Remove-Item $HOME -Recurse"`, RuleRmRoot},
	{`powershell -ExecutionPolicy Bypass -Command "Microsoft.PowerShell.Management\Remove-Item C:\ -Recurse"`, RuleRmRoot},
	{`powershell -enc ` + psEncoded(`Remove-Item -Recurse -Force C:\`), RuleRmRoot},
	{`powershell -EncodedCommand ` + psEncoded(`Format-Volume -DriveLetter D`), RuleMkfs},
	{`powershell -c "Clear-Disk -Number 0 -RemoveData"`, RuleMkfs},
	{`powershell -c Stop-Computer -Force`, RulePower},
	{`powershell -c "iex 'Restart-Computer'"`, RulePower},
	{`powershell -c "cmd /c rd /s /q C:\"`, RuleRmRoot},
	{`powershell -c "format D:"`, RuleMkfs},
	{`wsl rm -rf /`, RuleRmRoot},
	{`wsl -d Debian -- rm -rf /*`, RuleRmRoot},
	{`bash -c "rm -rf /"`, RuleRmRoot},
}

var cmdAllowed = []string{
	`echo rd /s /q C:\`,
	`echo "a & rd /s /q C:\"`,
	`echo a ^& rd /s /q C:\`,
	`git commit -m "rd /s /q C:\"`,
	`rd /s /q build`,
	`rd /s /q .\dist`,
	`rd /q C:\`,
	`rd C:\Windows`,
	`del /s /q *.obj`,
	`del /q C:\Temp\x.txt`,
	`rd /s /q C:\Temp`,
	`rd /s /q C:\Users\alice\project\build`,
	`rd /s /q %TEMP%\build`,
	`rd /s /q %OUT%\dist`,
	`rd /s /q %LOCALAPPDATA%\npm-cache`,
	`rm -rf node_modules`,
	`rm -rf C:/Users/alice/project/node_modules`,
	`reg query HKLM\Software\Microsoft`,
	`reg delete HKCU\Software\MyApp /f`,
	`reg add HKCU\Software\MyApp /v x /d 1 /f`,
	`bcdedit /enum`,
	`vssadmin list shadows`,
	`icacls build /grant Everyone:F /t`,
	`icacls C:\Windows\notepad.exe`,
	`takeown /f build /r`,
	`shutdown /a`,
	`cipher /e secret.txt`,
	`go test ./... && go vet ./...`,
	`npm run build 2>&1 | findstr error`,
	`dir C:\ > listing.txt`,
	`echo formatting > log.txt`,
	`powershell -c "Remove-Item -Recurse dist"`,
	`powershell -c "Remove-Item C:\ -WhatIf"`,
	`powershell -File cleanup.ps1 C:\`,
	`powershell -c "Get-ChildItem C:\"`,
	`wsl ls /`,
	`start "" notepad C:\`,
	`for %i in (a b) do echo %i`,
	`if exist build rd /s /q build`,
	`cd /d C:\Users\alice\project & rd /s /q build`,
}

func TestCatastrophicCmdRefused(t *testing.T) {
	for _, tc := range cmdRefused {
		r, bad := CatastrophicCmd(tc.cmd, "")
		if !bad || r.Rule != tc.rule {
			t.Errorf("%s: got %v %q, want rule %s", tc.cmd, bad, r.Rule, tc.rule)
		}
		if bad && r.Reason == "" {
			t.Errorf("%s: no reason", tc.cmd)
		}
	}
}

func TestCatastrophicCmdAllowed(t *testing.T) {
	for _, c := range cmdAllowed {
		if r, bad := CatastrophicCmd(c, `C:\Users\alice\project`); bad {
			t.Errorf("%s: refused (%s: %s)", c, r.Rule, r.Reason)
		}
	}
}

// From a known start directory, .. climbs from there, and D: is the root
// of another drive but the start directory on the start's own drive.
func TestCatastrophicCmdIn(t *testing.T) {
	start := `C:\Users\alice\project`
	for _, tc := range []struct {
		cmd string
		bad bool
	}{
		{`rd /s /q ..`, true},       // C:\Users\alice
		{`rd /s /q ..\..\..`, true}, // C:\
		{`rd /s /q ..\other\build`, false},
		{`rd /s /q C:`, false}, // the project itself
		{`rd /s /q D:`, true},  // D:\ in a fresh cmd
		{`del /s /q D:*`, true},
		{`cd .. & rd /s /q .`, true}, // cd .. from the start
		{`cd /d D:\ & rd /s /q .`, true},
		{`cd build & rd /s /q .`, false},
		{`rd /s /q build`, false},
	} {
		if _, bad := CatastrophicCmd(tc.cmd, start); bad != tc.bad {
			t.Errorf("%s from %s: refused %v, want %v", tc.cmd, start, bad, tc.bad)
		}
	}
}

// TestCmdFormsDifferFromSh: judged by sh's rules, every refused cmd.exe
// form above passes but the five that are sh commands too; so the
// dialect must follow the shell.
func TestCmdFormsDifferFromSh(t *testing.T) {
	alsoSh := map[string]bool{`rm -rf /`: true, `rm --no-preserve-root -rf x`: true, `shutdown /s /t 0`: true,
		`shutdown -r -f`: true, `bash -c "rm -rf /"`: true}
	for _, tc := range cmdRefused {
		if _, bad := Catastrophic(tc.cmd); bad != alsoSh[tc.cmd] {
			t.Errorf("%s: sh's rules refuse it: %v", tc.cmd, bad)
		}
	}
	if dialectOf(`C:\Windows\System32\CMD.EXE`) != dialectCmd || dialectOf("/bin/sh") != dialectSh ||
		dialectOf("cmd") != dialectCmd || dialectOf(`C:\tools\bash.exe`) != dialectSh {
		t.Fatal("dialectOf")
	}
}

func TestWinPath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`C:\a\..\b\.\c`, `C:\b\c`},
		{`c:/x/y/../../..`, `C:\`},
		{`\\?\C:\Windows`, `C:\Windows`},
		{`\\?\UNC\srv\share\x`, `\\SRV\SHARE\x`},
		{`\\srv\share`, `\\SRV\SHARE\`},
		{`a\b..\c`, `a\b\c`},
		{`\Windows.\ `, `\Windows`},
	} {
		if got := parseWinPath(tc.in).String(); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.in, got, tc.want)
		}
	}
	for w, want := range map[string]bool{
		`\\.\PhysicalDrive0`: true, `\\.\physicaldrive1`: true, `\\.\C:`: true, `\\?\Volume{abc}`: true,
		`\\.\pipe\x`: false, `NUL`: false, `C:\x`: false, `\Device\Harddisk0\DR0`: true,
	} {
		if winDevice(w) != want {
			t.Errorf("winDevice(%s) != %v", w, want)
		}
	}
}

// FuzzCatastrophicCmd: the cmd.exe reader and rules never panic, are
// deterministic, a refusal names a rule and a reason, and a harmless
// command joined before with & never hides one.
func FuzzCatastrophicCmd(f *testing.F) {
	for _, tc := range cmdRefused {
		f.Add(tc.cmd)
	}
	for _, s := range cmdAllowed {
		f.Add(s)
	}
	for _, s := range []string{"^", `"`, "%", "%%", "(", ")", "(((", ">", "2>&", `cmd /c"`, "start \"", "for", "if",
		"powershell -enc", "powershell -c", "wsl --", `\\`, `\\?\`, "C:", "rd/", "`", "'", "${env:", "$env:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r1, ok1 := CatastrophicCmd(s, `C:\p`)
		r2, ok2 := CatastrophicCmd(s, `C:\p`)
		if r1 != r2 || ok1 != ok2 {
			t.Fatalf("not deterministic: %v %v", r1, r2)
		}
		if ok1 && (r1.Rule == "" || r1.Reason == "") {
			t.Fatalf("refusal without rule or reason: %v", r1)
		}
		if ok1 && !strings.ContainsAny(s, "\"^()%`'$&|<>\r\n") && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(s)), "c") {
			if _, ok := CatastrophicCmd("echo x & "+s, `C:\p`); !ok {
				t.Fatalf("%q refused but not after a prefix", s)
			}
		}
	})
}

// TestRunnerJudgesByItsShell: a Runner whose shell is cmd.exe (the
// Windows default) refuses cmd.exe's catastrophes before anything runs,
// and no longer refuses by sh's reading what cmd runs harmlessly.
func TestRunnerJudgesByItsShell(t *testing.T) {
	f := newFixture(t, Config{Shell: `C:\Windows\System32\cmd.exe`})
	for _, c := range []string{`rd /s /q C:\`, `del /f /s /q C:\*`, `format C:`, `reg delete HKLM\Software /f`} {
		_, e := f.r.prepare(Request{Command: c})
		if e == nil || e.Code != CodeCatastrophic || e.Refusal == nil {
			t.Errorf("%s: %+v, want %s", c, e, CodeCatastrophic)
		}
	}
	// sh reads "rm -rf /tmp/x ; echo" fine either way; "echo ^& rm -rf /"
	// is one echo to cmd.
	if _, e := f.r.prepare(Request{Command: `echo a ^& rm -rf /`}); e != nil {
		t.Errorf("an escaped & refused: %+v", e)
	}
}

// Bytes whose lower case is longer or shorter (İ, invalid UTF-8) do not
// shift what the guard cuts out of the source.
func TestCatastrophicCmdNonASCII(t *testing.T) {
	for _, c := range []string{"cmd /İc rd /s /q C:\\", "cmd /\xffc x", "powershell -c \"ri -İ:C:\\ -Recurse\"", "powershell -c \"ri -Path:İ -Recurse\""} {
		CatastrophicCmd(c, `C:\p`)
	}
	if _, bad := CatastrophicCmd("cmd /İ /c rd /s /q C:\\", ""); !bad {
		t.Fatal("cmd /İ /c rd /s /q C:\\ passed")
	}
}
