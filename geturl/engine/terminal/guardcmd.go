package terminal

import (
	"encoding/base64"
	"strings"
	"unicode/utf16"
)

// Rules of the guard rail that only Windows commands reach.
const (
	RuleRegistryDelete = "registry_delete"
	RuleBootConfig     = "boot_configuration"
	RuleShadowCopies   = "delete_shadow_copies"
)

// CatastrophicCmd is Catastrophic for a command line that cmd.exe runs
// (the terminal's shell on Windows), starting in the host directory dir
// ("" when unknown). It reads cmd's syntax (cmdwords.go: & && || |
// separators, ^ escapes, "…" quoting, %VAR%, ( ) blocks) and refuses:
//
//   - rd/rmdir /s and del/erase /s (also rd/s/q glued) on a drive's root
//     (C:\, \, C:\*, another drive's D:), a top-level directory other than
//     \Temp and \tmp, a home directory (C:\Users\NAME, %USERPROFILE%),
//     C:\Windows and the directories directly in it, or a share's root;
//     a path that climbs out of dir with .. is judged from there, one after
//     a cd or pushd (/d) the guard can follow from that directory;
//   - format and diskpart, whatever their arguments; cipher /w;
//   - writes to a raw disk or volume (\\.\PhysicalDrive0, \\.\C:) by
//     redirection;
//   - reg delete of HKLM, HKCR, HKU or HKCC keys, and of HKCU itself or a
//     key directly in it;
//   - bcdedit other than /enum and /v; vssadmin delete shadows or resize
//     shadowstorage, wmic shadowcopy delete, wbadmin delete;
//   - takeown /r and icacls (/t, /grant, /deny, /reset, /setowner,
//     /remove, /inheritance) on the paths rd refuses;
//   - shutdown other than /a;
//   - rm with a recursive flag (Git for Windows puts rm.exe on PATH) on
//     those paths or on the ones Catastrophic refuses.
//
// Text that runs again is checked too: cmd /c and /k, start, call, the
// command after for's do and after if's condition, PowerShell's -Command,
// its positional command and -EncodedCommand (powershell.go's rules:
// Remove-Item -Recurse and its aliases on those paths, Format-Volume,
// Clear-Disk, Stop-Computer, …), and wsl's and bash -c's commands, judged
// by Catastrophic. Names are matched without case, directory or .exe,
// .com, .bat or .cmd. As for sh, "echo rd /s /q C:\" passes: only words in
// command position count.
func CatastrophicCmd(command, dir string) (Refusal, bool) {
	g := guard{start: dir}
	r := g.checkCmdLine(command, 0)
	return r, r.Rule != ""
}

func (g *guard) budget(src string, depth int) bool {
	if depth > maxGuardDepth || g.texts >= maxGuardNestedTexts || g.bytes+len(src) > maxGuardBytes {
		return false
	}
	g.texts++
	g.bytes += len(src)
	return true
}

func (g *guard) checkCmdLine(src string, depth int) Refusal {
	if !g.budget(src, depth) {
		return Refusal{}
	}
	dir := ""
	for _, c := range parseCmd(src) {
		if r := g.checkCmdCommand(c, depth, &dir); r.Rule != "" {
			return r
		}
	}
	return Refusal{}
}

// cmdInternal are cmd's own commands whose name ends at a "/" (rd/s/q).
var cmdInternal = map[string]bool{
	"rd": true, "rmdir": true, "del": true, "erase": true, "cd": true, "chdir": true, "pushd": true,
	"start": true, "call": true, "for": true, "if": true,
}

// cmdName is a command word as cmd finds the program: lower case, without
// directories and the extensions PATHEXT tries first. A glued switch of an
// internal command (rd/s/q) comes back as extra words.
func cmdName(w string) (name string, glued []string) {
	lw := strings.ToLower(w)
	if k := strings.IndexByte(lw, '/'); k > 0 && cmdInternal[lw[:k]] {
		for _, f := range strings.Split(lw[k+1:], "/") {
			if f != "" {
				glued = append(glued, "/"+f)
			}
		}
		return lw[:k], glued
	}
	if k := strings.LastIndexAny(lw, `\/`); k >= 0 {
		lw = lw[k+1:]
	}
	if k := strings.LastIndexByte(lw, ':'); k >= 0 {
		lw = lw[k+1:]
	}
	for _, ext := range []string{".exe", ".com", ".bat", ".cmd"} {
		if n, ok := strings.CutSuffix(lw, ext); ok && n != "" {
			return n, nil
		}
	}
	return strings.TrimRight(lw, ". "), nil
}

// cmdSwitch reports whether a word is a switch (/s, /Q, /w:C:\, /s/q),
// and its lower-case letters after each "/".
func cmdSwitch(w string) ([]string, bool) {
	if len(w) < 2 || w[0] != '/' || !isLetter(w[1]) && w[1] != '?' {
		return nil, false
	}
	var out []string
	for _, f := range strings.Split(strings.ToLower(w[1:]), "/") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out, true
}

func hasSwitch(args []string, name string) bool {
	for _, a := range args {
		if sw, ok := cmdSwitch(a); ok {
			for _, s := range sw {
				if s == name || strings.HasPrefix(s, name+":") {
					return true
				}
			}
		}
	}
	return false
}

func nonSwitches(args []string) []string {
	var out []string
	for _, a := range args {
		if _, ok := cmdSwitch(a); !ok {
			out = append(out, a)
		}
	}
	return out
}

// ruleCommands are the names whose rules may refuse; "if" is looked
// through to the first of them.
var ruleCommands = map[string]bool{
	"rd": true, "rmdir": true, "del": true, "erase": true, "format": true, "diskpart": true,
	"cipher": true, "reg": true, "bcdedit": true, "vssadmin": true, "wmic": true, "wbadmin": true,
	"takeown": true, "icacls": true, "shutdown": true, "rm": true, "cmd": true, "powershell": true,
	"pwsh": true, "start": true, "call": true, "wsl": true, "bash": true, "sh": true,
}

const rootishWin = "a drive's root, a top-level or home directory or the Windows directory"

func (g *guard) checkCmdCommand(c *cmdCommand, depth int, dir *string) Refusal {
	for _, w := range c.writes {
		if winDevice(w) {
			return Refusal{RuleDiskWrite, "redirection into a disk or volume device"}
		}
	}
	if len(c.words) == 0 {
		return Refusal{}
	}
	if w := c.words[0]; len(w) == 2 && w[1] == ':' && isLetter(w[0]) && len(c.words) == 1 {
		// "D:" switches drive: to its root in a fresh cmd, or back to the
		// start's directory.
		*dir = ""
		if d := strings.ToUpper(w); driveOf(g.start) != d {
			*dir = d + `\`
		}
		return Refusal{}
	}
	name, glued := cmdName(c.words[0])
	args := append(glued, c.words[1:]...)
	// The source text after word i, for the commands that run it again.
	restAfter := func(i int) string {
		if i+1 < len(c.rest) {
			return c.rest[i+1]
		}
		return ""
	}
	rootish := func(w string) bool { return winRootish(w, *dir, g.start) }
	switch name {
	case "cd", "chdir", "pushd":
		ops := nonSwitches(args)
		if len(ops) == 0 {
			return Refusal{}
		}
		t, _ := winExpand(strings.Join(ops, " ")) // cd takes spaces unquoted
		switch r := winResolve(t, *dir, g.start); {
		case r != "":
			*dir = parseWinPath(r).String()
		case !winAbsolute(t):
			// relative to the start: the project; the guard keeps "".
		}
		return Refusal{}
	case "rd", "rmdir", "del", "erase":
		if !hasSwitch(args, "s") {
			return Refusal{}
		}
		for _, t := range nonSwitches(args) {
			if rootish(t) {
				return Refusal{RuleRmRoot, name + " /s of " + rootishWin}
			}
		}
	case "rm":
		var unix []string
		for _, a := range args {
			unix = append(unix, strings.ReplaceAll(a, `\`, "/"))
		}
		if r := checkRm(unix); r.Rule != "" {
			return r
		}
		if r := checkRm(args); r.Rule == RuleNoPreserveRoot {
			return r
		}
		recursive := false
		for _, a := range args {
			if a == "--recursive" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "rR") {
				recursive = true
			}
		}
		if recursive {
			for _, t := range operands(args) {
				if rootish(t) {
					return Refusal{RuleRmRoot, "recursive rm of " + rootishWin}
				}
			}
		}
	case "format":
		if len(args) == 1 && args[0] == "/?" {
			return Refusal{}
		}
		return Refusal{RuleMkfs, "format erases a volume"}
	case "diskpart":
		return Refusal{RuleMkfs, "diskpart partitions and erases disks"}
	case "cipher":
		if hasSwitch(args, "w") {
			return Refusal{RuleDiskWrite, "cipher /w overwrites all free space of a volume"}
		}
	case "reg":
		ops := nonSwitches(args)
		if len(ops) >= 2 && strings.EqualFold(ops[0], "delete") && machineKey(ops[1]) {
			return Refusal{RuleRegistryDelete, "reg delete of a machine-wide registry key or a whole hive"}
		}
	case "bcdedit":
		if len(args) > 0 {
			switch strings.ToLower(args[0]) {
			case "/enum", "/v", "/?":
				return Refusal{}
			}
		}
		return Refusal{RuleBootConfig, "bcdedit changes how the machine boots"}
	case "vssadmin":
		ops := lowerAll(nonSwitches(args))
		if len(ops) >= 2 && (ops[0] == "delete" && ops[1] == "shadows" || ops[0] == "resize" && ops[1] == "shadowstorage") {
			return Refusal{RuleShadowCopies, "vssadmin " + ops[0] + " " + ops[1] + " destroys the machine's restore points"}
		}
	case "wmic":
		ops := lowerAll(nonSwitches(args))
		for i := 0; i+1 < len(ops); i++ {
			if ops[i] == "shadowcopy" && ops[i+1] == "delete" {
				return Refusal{RuleShadowCopies, "wmic shadowcopy delete destroys the machine's restore points"}
			}
		}
	case "wbadmin":
		if ops := lowerAll(nonSwitches(args)); len(ops) > 0 && ops[0] == "delete" {
			return Refusal{RuleShadowCopies, "wbadmin delete destroys the machine's backups"}
		}
	case "takeown":
		if !hasSwitch(args, "r") {
			return Refusal{}
		}
		for i, a := range args {
			if strings.EqualFold(a, "/f") && i+1 < len(args) && rootish(args[i+1]) {
				return Refusal{RuleRecursiveChmod, "takeown /r of " + rootishWin}
			}
		}
	case "icacls":
		ops := nonSwitches(args)
		if len(ops) == 0 || !rootish(ops[0]) {
			return Refusal{}
		}
		for _, s := range []string{"t", "grant", "grant:r", "deny", "reset", "setowner", "remove", "remove:g", "remove:d", "inheritance", "setintegritylevel"} {
			if hasSwitch(args, s) {
				return Refusal{RuleRecursiveChmod, "icacls changing the permissions of " + rootishWin}
			}
		}
	case "shutdown":
		if hasSwitch(args, "a") || hasSwitch(args, "?") {
			return Refusal{}
		}
		return Refusal{RulePower, "shutdown changes the machine's power state"}
	case "cmd":
		// The first /c, /k or /r (also glued: /s/c, /c"…") starts the text.
		for i := 1; i < len(c.words); i++ {
			raw := c.raws[i]
			if !strings.HasPrefix(raw, "/") {
				break
			}
			for k := 0; k+1 < len(raw); k++ {
				if raw[k] == '/' && strings.IndexByte("cCkKrR", raw[k+1]) >= 0 {
					return g.checkCmdLine(stripOuterQuotes(c.rest[i][k+2:]), depth+1)
				}
			}
		}
	case "start":
		i := 1
		if i < len(c.raws) && strings.HasPrefix(c.raws[i], `"`) {
			i++ // the window title
		}
		for i < len(c.words) {
			sw, ok := cmdSwitch(c.words[i])
			if !ok {
				break
			}
			if len(sw) == 1 && (sw[0] == "d" || sw[0] == "affinity" || sw[0] == "node") {
				i++
			}
			i++
		}
		if i < len(c.words) {
			return g.checkCmdLine(c.rest[i], depth+1)
		}
	case "call":
		return g.checkCmdLine(restAfter(0), depth+1)
	case "for":
		for i := 1; i < len(c.words); i++ {
			if strings.EqualFold(c.words[i], "do") {
				return g.checkCmdLine(restAfter(i), depth+1)
			}
		}
	case "if":
		for i := 1; i < len(c.words); i++ {
			if n, _ := cmdName(c.words[i]); ruleCommands[n] {
				if r := g.checkCmdLine(c.rest[i], depth+1); r.Rule != "" {
					return r
				}
			}
		}
	case "powershell", "pwsh":
		for _, s := range psScripts(c.words[1:], c.rest[1:]) {
			if r := g.checkPS(s, depth+1); r.Rule != "" {
				return r
			}
		}
	case "wsl":
		i := 1
		for i < len(c.words) {
			a := c.words[i]
			if a == "--" || a == "-e" || a == "--exec" {
				i++
				break
			}
			if !strings.HasPrefix(a, "-") {
				break
			}
			switch a {
			case "-d", "--distribution", "-u", "--user", "--cd":
				i++
			}
			i++
		}
		if i < len(c.words) {
			return g.check(strings.Join(c.words[i:], " "), depth+1)
		}
	case "bash", "sh":
		for i := 1; i+1 < len(c.words); i++ {
			if c.words[i] == "-c" {
				return g.check(c.words[i+1], depth+1)
			}
		}
	}
	return Refusal{}
}

// machineKey reports whether a reg key names a machine-wide hive (HKLM,
// HKCR, HKU, HKCC, with \\host prefixes allowed) or the current user's
// hive itself or a key directly in it.
func machineKey(k string) bool {
	k = strings.ToUpper(strings.TrimRight(k, `\`))
	if strings.HasPrefix(k, `\\`) {
		if i := strings.IndexByte(k[2:], '\\'); i >= 0 {
			k = k[2+i+1:]
		}
	}
	hive, rest, _ := strings.Cut(k, `\`)
	switch hive {
	case "HKLM", "HKEY_LOCAL_MACHINE", "HKCR", "HKEY_CLASSES_ROOT", "HKU", "HKEY_USERS", "HKCC", "HKEY_CURRENT_CONFIG":
		return true
	case "HKCU", "HKEY_CURRENT_USER":
		return !strings.Contains(rest, `\`)
	}
	return false
}

func lowerAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strings.ToLower(v)
	}
	return out
}

// stripOuterQuotes is what cmd /s /c does to its text: a leading quote and
// the last quote go.
func stripOuterQuotes(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, `"`) {
		return s
	}
	s = s[1:]
	if k := strings.LastIndexByte(s, '"'); k >= 0 {
		s = s[:k] + s[k+1:]
	}
	return s
}

// psScripts returns the PowerShell texts a powershell/pwsh invocation
// runs that the guard can see: the -Command text (the rest of the line),
// a decoded -EncodedCommand, or a positional command. -File runs a
// script out of sight.
func psScripts(args, rest []string) []string {
	for i := 0; i < len(args); i++ {
		a := strings.ToLower(args[i])
		if !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "/") {
			return []string{rest[i]} // the command, as -Command
		}
		opt := strings.TrimLeft(a, "-/")
		switch {
		case opt == "":
			if i+1 < len(rest) {
				return []string{rest[i+1]} // "-" ends the options
			}
			return nil
		case opt == "c" || len(opt) >= 3 && strings.HasPrefix("command", opt):
			if i+1 < len(rest) {
				return []string{stripOuterQuotes(rest[i+1])}
			}
			return nil
		case opt == "e" || opt == "ec" || len(opt) >= 3 && strings.HasPrefix("encodedcommand", opt):
			if i+1 < len(args) {
				if s, ok := decodePSCommand(args[i+1]); ok {
					return []string{s}
				}
			}
			return nil
		case opt == "f" || len(opt) >= 2 && strings.HasPrefix("file", opt):
			return nil // a script file: out of sight
		case psOptionWithValue(opt):
			i++
		}
	}
	return nil
}

func psOptionWithValue(opt string) bool {
	for _, o := range []string{"executionpolicy", "ex", "ep", "windowstyle", "w", "configurationname",
		"inputformat", "outputformat", "of", "if", "workingdirectory", "wd", "psconsolefile", "version",
		"settingsfile", "custompipename", "encodedarguments", "ea"} {
		if opt == o {
			return true
		}
	}
	return false
}

// decodePSCommand decodes -EncodedCommand: base64 of UTF-16LE, at most
// the guard's byte budget.
func decodePSCommand(s string) (string, bool) {
	if len(s) > maxGuardBytes {
		return "", false
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%2 != 0 {
		return "", false
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
	}
	return string(utf16.Decode(u)), true
}
