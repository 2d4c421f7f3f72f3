package terminal

import (
	"path"
	"strings"

	"github.com/hubdev/hub/internal/lazyre"
)

// Refusal says why a command was judged an obvious machine-level
// catastrophe. Rule is a stable snake_case name; Reason is for people.
type Refusal struct {
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
}

// Rules of the guard rail.
const (
	RuleRmRoot         = "rm_root"
	RuleNoPreserveRoot = "rm_no_preserve_root"
	RuleMkfs           = "format_filesystem"
	RuleDiskWrite      = "raw_disk_write"
	RulePower          = "power_state"
	RuleForkBomb       = "fork_bomb"
	RuleRecursiveChmod = "recursive_root_permissions"
	RuleMoveRoot       = "move_root"
	RuleFindDeleteRoot = "find_delete_root"
	RuleKillAll        = "kill_all_processes"
)

const (
	maxGuardDepth       = 8
	maxGuardNestedTexts = 256
	maxGuardBytes       = 1 << 20
)

// Catastrophic reports whether command is an obvious machine-level
// catastrophe, and which one. It is a guard rail against accidents, not a
// sandbox: the terminal is a real host shell, and a deliberately constructed
// command (a variable holding "/", base64 piped into a shell, a script file,
// another interpreter) will get past it. It refuses:
//
//   - rm with a recursive flag on "/", "/*", "/.", a one-component absolute
//     path other than /tmp (/usr, /etc, /home, …), a home directory (~, ~/,
//     ~user, $HOME, /home/NAME, /Users/NAME), or on a path that becomes one
//     of those when its unknown variables are empty ("$DIR/" is "/"); and rm
//     --no-preserve-root in any form; a relative path after a cd the guard
//     can follow counts from there ("cd / && rm -rf *" is "rm -rf /*");
//   - mkfs, mkfs.*, mke2fs, mkswap, wipefs and blkdiscard, whatever their
//     arguments;
//   - writes to a disk device (/dev/sd*, nvme*, hd*, vd*, xvd*, mmcblk*,
//     disk*, dm-*, md*, mapper/*, mem, kmem, …): dd of=, redirections
//     (>, >>, &>, …), tee, cp and shred;
//   - shutdown, reboot, halt, poweroff (with any arguments), init or telinit
//     0 or 6, systemctl or loginctl poweroff/reboot/halt/kexec/suspend (or
//     isolate/start of such a target, or rescue/emergency), kexec, and a
//     redirection or tee into /proc/sysrq-trigger;
//   - fork bombs: a shell function that pipes into or backgrounds a call of
//     itself, such as :(){ :|:& };:
//   - chmod, chown and chgrp with -R on the paths rm refuses;
//   - mv of those paths; find on them with -delete or -exec rm;
//   - kill of pid -1 (every process the user may signal).
//
// Only words in command position count: "echo rm -rf /" and git commit -m
// "rm -rf /" pass, because the words are data. Text that a shell will run is
// checked too: command substitutions, sh/bash/… -c scripts, eval, su -c,
// here-documents, here-strings and echo/printf/cat piped into a shell.
// Wrappers are looked through (sudo, doas, env, nohup, nice, ionice,
// timeout, stdbuf, xargs, exec, command, time, setsid, busybox), as are
// leading assignments, keywords (if, then, do, !, {, …) and directories in
// the command name (/bin/rm). Relative paths are never refused while the
// shell is in its starting directory: they name the project, which is not a
// machine-level catastrophe.
func Catastrophic(command string) (Refusal, bool) {
	return CatastrophicIn(command, "")
}

// CatastrophicIn is Catastrophic for a command that starts in the host
// directory dir: a relative path that climbs with ".." is judged from there,
// so "rm -rf ../../.." from a project three levels down is "rm -rf /".
// Other relative paths still name the project and are never refused.
func CatastrophicIn(command, dir string) (Refusal, bool) {
	g := guard{start: dir}
	r := g.check(command, 0)
	return r, r.Rule != ""
}

// guard bounds one check: texts run by the command (substitutions, -c
// scripts, …) are checked to a depth, a count and a total size, so a crafted
// command cannot make the check expensive.
type guard struct {
	texts, bytes int
	start        string // the host directory the command starts in, or ""
}

func (g *guard) check(src string, depth int) Refusal {
	if depth > maxGuardDepth || g.texts >= maxGuardNestedTexts || g.bytes+len(src) > maxGuardBytes {
		return Refusal{}
	}
	g.texts++
	g.bytes += len(src)
	if forkBomb(src) {
		return Refusal{RuleForkBomb, "a shell function that forks copies of itself"}
	}
	s := parseShell(src)
	dir := "" // where an earlier cd went; "" is the start (the project)
	for _, c := range s.cmds {
		if r := g.checkCmd(c, depth, &dir); r.Rule != "" {
			return r
		}
	}
	for _, n := range s.nested {
		if r := g.check(n, depth+1); r.Rule != "" {
			return r
		}
	}
	return Refusal{}
}

func (g *guard) checkCmd(c *simpleCmd, depth int, dir *string) Refusal {
	for _, w := range c.writes {
		if blockDevice(w) {
			return Refusal{RuleDiskWrite, "redirection into a disk device"}
		}
		if w == sysrqTrigger {
			return Refusal{RulePower, "a write to " + sysrqTrigger + " can reboot or halt the machine"}
		}
	}
	words, inner := unwrap(c.words)
	for _, s := range inner {
		if r := g.check(s, depth+1); r.Rule != "" {
			return r
		}
	}
	if len(words) == 0 {
		return Refusal{}
	}
	name, args := path.Base(words[0]), words[1:]
	switch name {
	case "cd", "pushd":
		*dir = changeDir(*dir, g.start, args)
		return Refusal{}
	case "rm", "mv", "find":
		args = resolveArgs(*dir, g.start, args, 0)
	case "chmod", "chown", "chgrp":
		args = resolveArgs(*dir, g.start, args, 1) // the mode or owner is no path
	}
	switch {
	case name == "rm":
		return checkRm(args)
	case strings.HasPrefix(name, "mkfs"), name == "mke2fs", name == "mkswap", name == "wipefs", name == "blkdiscard":
		return Refusal{RuleMkfs, name + " formats or erases a device"}
	case name == "dd":
		for _, a := range args {
			if v, ok := strings.CutPrefix(a, "of="); ok && blockDevice(v) {
				return Refusal{RuleDiskWrite, "dd onto a disk device"}
			}
		}
	case name == "tee", name == "shred":
		for _, a := range args {
			if name == "tee" && a == sysrqTrigger {
				return Refusal{RulePower, "a write to " + sysrqTrigger + " can reboot or halt the machine"}
			}
			if blockDevice(a) {
				return Refusal{RuleDiskWrite, name + " onto a disk device"}
			}
		}
	case name == "cp":
		if ops := operands(args); len(ops) > 1 && blockDevice(ops[len(ops)-1]) {
			return Refusal{RuleDiskWrite, "cp onto a disk device"}
		}
	case name == "shutdown", name == "reboot", name == "halt", name == "poweroff":
		return Refusal{RulePower, name + " changes the machine's power state"}
	case name == "init", name == "telinit":
		if len(args) > 0 && (args[0] == "0" || args[0] == "6") {
			return Refusal{RulePower, name + " " + args[0] + " halts or reboots the machine"}
		}
	case name == "systemctl", name == "loginctl":
		ops := operands(args)
		if len(ops) == 0 {
			break
		}
		switch verb := ops[0]; verb {
		case "poweroff", "reboot", "halt", "kexec", "soft-reboot", "suspend", "hibernate":
			return Refusal{RulePower, name + " " + verb + " changes the machine's power state"}
		case "isolate", "start", "restart":
			// the targets those verbs stand for
			for _, unit := range ops[1:] {
				switch strings.TrimSuffix(unit, ".target") {
				case "poweroff", "reboot", "halt", "kexec", "soft-reboot", "rescue", "emergency":
					return Refusal{RulePower, name + " " + verb + " " + unit + " changes the machine's power state"}
				}
			}
		}
	case name == "kexec":
		return Refusal{RulePower, "kexec replaces the running kernel"}
	case name == "chmod", name == "chown", name == "chgrp":
		return checkRecursivePerm(name, args)
	case name == "mv":
		ops := operands(args)
		for i := 0; i+1 < len(ops); i++ {
			if rootish(ops[i]) {
				return Refusal{RuleMoveRoot, "mv of / or a top-level or home directory"}
			}
		}
	case name == "find":
		return checkFind(args)
	case name == "kill":
		return checkKill(args)
	case name == "eval":
		return g.check(strings.Join(args, " "), depth+1)
	case name == "su":
		for i, a := range args {
			if a == "-c" || a == "--command" {
				if i+1 < len(args) {
					return g.check(args[i+1], depth+1)
				}
			} else if v, ok := strings.CutPrefix(a, "--command="); ok {
				return g.check(v, depth+1)
			}
		}
	case shells[name]:
		for _, s := range shellScripts(c, args) {
			if r := g.check(s, depth+1); r.Rule != "" {
				return r
			}
		}
	}
	return Refusal{}
}

var shells = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true,
	"ash": true, "yash": true, "posh": true, "fish": true, "rbash": true,
}

// shellScripts returns the texts a shell invocation will run that the guard
// can see: the -c argument, or, when the shell reads its script from
// standard input, the here-documents and here-strings fed to it and the
// arguments of an echo or printf (or the input of a cat) piped into it.
func shellScripts(c *simpleCmd, args []string) []string {
	hasC, ops := false, []string(nil)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		if len(a) > 1 && (a[0] == '-' || a[0] == '+') && len(ops) == 0 {
			if strings.HasPrefix(a, "--") {
				if a == "--rcfile" || a == "--init-file" {
					i++
				}
				continue
			}
			if strings.ContainsRune(a, 'c') {
				hasC = true
			}
			if strings.ContainsRune(a, 'o') || strings.ContainsRune(a, 'O') {
				i++ // -o option takes an argument
			}
			continue
		}
		ops = append(ops, a)
	}
	if hasC {
		if len(ops) > 0 {
			return ops[:1]
		}
		return nil
	}
	if len(ops) > 0 {
		return nil // a script file: out of sight
	}
	texts := append([]string(nil), c.stdin...)
	if in := c.pipeIn; in != nil {
		words, _ := unwrap(in.words)
		if len(words) > 0 {
			switch path.Base(words[0]) {
			case "echo":
				texts = append(texts, strings.Join(words[1:], " "))
			case "printf":
				texts = append(texts, strings.ReplaceAll(strings.Join(words[1:], " "), `\n`, "\n"))
			case "cat":
				texts = append(texts, in.stdin...)
			}
		}
	}
	return texts
}

func checkRm(args []string) Refusal {
	recursive, targets, opts := false, []string(nil), true
	for _, a := range args {
		switch {
		case !opts || a == "-" || !strings.HasPrefix(a, "-"):
			targets = append(targets, a)
		case a == "--":
			opts = false
		case a == "--no-preserve-root":
			return Refusal{RuleNoPreserveRoot, "rm --no-preserve-root"}
		case a == "--recursive":
			recursive = true
		case strings.HasPrefix(a, "--"):
		case strings.ContainsAny(a, "rR"):
			recursive = true
		}
	}
	if !recursive {
		return Refusal{}
	}
	for _, t := range targets {
		if rootish(t) {
			return Refusal{RuleRmRoot, "recursive rm of / or a top-level or home directory"}
		}
	}
	return Refusal{}
}

func checkRecursivePerm(name string, args []string) Refusal {
	recursive := false
	for _, a := range args {
		if a == "--recursive" || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'R')) {
			recursive = true
		}
	}
	if !recursive {
		return Refusal{}
	}
	for _, t := range operands(args) {
		if rootish(t) {
			return Refusal{RuleRecursiveChmod, name + " -R of / or a top-level or home directory"}
		}
	}
	return Refusal{}
}

func checkFind(args []string) Refusal {
	var starts []string
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "-H" || a == "-L" || a == "-P" || strings.HasPrefix(a, "-O") {
			continue
		}
		if a == "-D" {
			i++
			continue
		}
		break
	}
	for ; i < len(args) && !strings.HasPrefix(args[i], "-") && args[i] != "(" && args[i] != "!"; i++ {
		starts = append(starts, args[i])
	}
	destructive := false
	for j := i; j < len(args); j++ {
		switch args[j] {
		case "-delete":
			destructive = true
		case "-exec", "-execdir", "-ok", "-okdir":
			if j+1 < len(args) && path.Base(args[j+1]) == "rm" {
				destructive = true
			}
		}
	}
	if !destructive {
		return Refusal{}
	}
	for _, s := range starts {
		if rootish(s) {
			return Refusal{RuleFindDeleteRoot, "find deleting under / or a top-level or home directory"}
		}
	}
	return Refusal{}
}

func checkKill(args []string) Refusal {
	i := 0
	if len(args) > 0 {
		switch a := args[0]; {
		case a == "-s" || a == "-n":
			i = 2
		case a == "-l" || a == "-L":
			return Refusal{}
		case len(a) > 1 && a[0] == '-' && a != "--":
			i = 1 // the signal
		}
	}
	for ; i < len(args); i++ {
		if args[i] == "-1" {
			return Refusal{RuleKillAll, "kill of pid -1 signals every process"}
		}
	}
	return Refusal{}
}

// operands drops option words (all words starting with "-" before "--").
func operands(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if len(a) > 1 && a[0] == '-' {
			continue
		}
		out = append(out, a)
	}
	return out
}

// wrapper describes a command that runs another: its options that take an
// argument (short letters, long names), and how many operands come before
// the wrapped command.
type wrapper struct {
	short    string
	long     []string
	operands int
	// noexec lists options after which the wrapper runs nothing
	// (command -v only looks a name up).
	noexec []string
}

var wrappers = map[string]wrapper{
	"sudo":     {short: "ugCDhprtTU", long: []string{"--user", "--group", "--chdir", "--prompt", "--role", "--type", "--host", "--close-from", "--other-user"}},
	"doas":     {short: "uC"},
	"env":      {short: "uCS", long: []string{"--unset", "--chdir", "--split-string"}},
	"nohup":    {},
	"exec":     {short: "a"},
	"command":  {noexec: []string{"-v", "-V"}},
	"builtin":  {},
	"nice":     {short: "n", long: []string{"--adjustment"}},
	"ionice":   {short: "cnp", long: []string{"--class", "--classdata", "--pid"}},
	"timeout":  {short: "sk", long: []string{"--signal", "--kill-after"}, operands: 1},
	"stdbuf":   {short: "ioe", long: []string{"--input", "--output", "--error"}},
	"xargs":    {short: "IinPLlsdEea", long: []string{"--replace", "--max-args", "--max-procs", "--max-lines", "--max-chars", "--delimiter", "--eof", "--arg-file"}},
	"time":     {short: "fo", long: []string{"--format", "--output"}},
	"setsid":   {},
	"busybox":  {},
	"chronic":  {},
	"unbuffer": {},
}

var keywords = map[string]bool{
	"!": true, "{": true, "}": true, "if": true, "then": true, "else": true, "elif": true,
	"do": true, "while": true, "until": true, "fi": true, "done": true,
}

var assignRe = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=`)

// unwrap drops what precedes the real command: assignments, keywords and
// wrappers with their options. inner returns command lines hidden in
// options (env -S).
func unwrap(words []string) (rest []string, inner []string) {
	for len(words) > 0 {
		w := words[0]
		if keywords[w] || assignRe().MatchString(w) {
			words = words[1:]
			continue
		}
		wr, ok := wrappers[path.Base(w)]
		if !ok {
			break
		}
		words = words[1:]
		for len(words) > 0 {
			a := words[0]
			if a == "--" {
				words = words[1:]
				break
			}
			if len(a) < 2 || a[0] != '-' {
				if path.Base(w) == "env" && assignRe().MatchString(a) {
					words = words[1:]
					continue
				}
				break
			}
			for _, n := range wr.noexec {
				if a == n {
					return nil, inner
				}
			}
			words = words[1:]
			if strings.HasPrefix(a, "--") {
				name, _, hasVal := strings.Cut(a, "=")
				for _, l := range wr.long {
					if l == name && !hasVal && len(words) > 0 {
						if name == "--split-string" {
							inner = append(inner, words[0])
						}
						words = words[1:]
					}
				}
				if name == "--split-string" && hasVal {
					inner = append(inner, a[len(name)+1:])
				}
				continue
			}
			// A short cluster: the first letter taking an argument takes
			// the rest of the cluster, or the next word.
			for k := 1; k < len(a); k++ {
				if strings.IndexByte(wr.short, a[k]) < 0 {
					continue
				}
				arg := a[k+1:]
				if arg == "" && len(words) > 0 {
					arg = words[0]
					words = words[1:]
				}
				if path.Base(w) == "env" && a[k] == 'S' {
					inner = append(inner, arg)
				}
				break
			}
		}
		for n := 0; n < wr.operands && len(words) > 0; n++ {
			words = words[1:]
		}
	}
	return words, inner
}

// rootish reports whether a path word names "/", a top-level directory
// other than /tmp, or a home directory. An expansion the guard cannot know
// is taken as possibly empty, and then only a result of "/" counts: "$DIR/"
// may well be /, while "$OUT/dist" being /dist is no catastrophe. ${X:?…}
// is never empty (the shell stops first) and ${X:-d} is taken as d.
func rootish(w string) bool {
	p, unknown := expandForGuard(w)
	if !strings.HasPrefix(p, "/") {
		return false
	}
	c := path.Clean(p)
	for c != "/" && globOnly(path.Base(c)) {
		c = path.Dir(c)
	}
	if c == "/" {
		return true
	}
	if unknown {
		return false
	}
	parts := strings.Split(c[1:], "/")
	switch len(parts) {
	case 1:
		return c != "/tmp"
	case 2:
		return parts[0] == "home" || parts[0] == "Users"
	}
	return false
}

// expandForGuard rewrites a word for rootish: a leading ~ or ~user and
// $HOME become /home/~ or /home/user; other expansions become "" (or their
// default, or a placeholder when they cannot be empty).
func expandForGuard(w string) (p string, unknown bool) {
	if rest, ok := strings.CutPrefix(w, "~"); ok {
		user, tail, _ := strings.Cut(rest, "/")
		if user == "" {
			user = "~"
		}
		w = "/home/" + user + "/" + tail
	}
	var b strings.Builder
	for i := 0; i < len(w); {
		if w[i] != '$' {
			b.WriteByte(w[i])
			i++
			continue
		}
		rest := w[i+1:]
		switch {
		case strings.HasPrefix(rest, "()"):
			i += 3
			unknown = true
		case strings.HasPrefix(rest, "{"):
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				end = len(rest) - 1
			}
			inside := rest[1:max(end, 1)]
			i += end + 2
			name, op := inside, ""
			if k := strings.IndexAny(inside, ":-=?+#%/^,@["); k >= 0 {
				name, op = inside[:k], inside[k:]
			}
			switch {
			case name == "HOME" && (op == "" || strings.HasPrefix(op, ":?") || strings.HasPrefix(op, "?")):
				b.WriteString("/home/~")
			case strings.HasPrefix(op, ":?"), strings.HasPrefix(op, "?"):
				b.WriteString("x")
			case strings.HasPrefix(op, ":-"), strings.HasPrefix(op, ":="):
				b.WriteString(op[2:])
			case strings.HasPrefix(op, "-"), strings.HasPrefix(op, "="):
				b.WriteString(op[1:])
			default:
				unknown = true
			}
		default:
			n := 0
			if rest != "" && strings.IndexByte("@*#?$!-0123456789", rest[0]) >= 0 {
				n = 1 // a special or positional parameter
			} else {
				for n < len(rest) && isNameByte(rest[n]) {
					n++
				}
			}
			switch {
			case n == 0:
				b.WriteByte('$')
			case rest[:n] == "HOME":
				b.WriteString("/home/~")
			default:
				unknown = true
			}
			i += 1 + n
		}
	}
	return b.String(), unknown
}

func isNameByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// globOnly reports whether a path component is nothing but a wildcard such
// as *, .*, ?* (so it stands for "everything in the parent").
func globOnly(name string) bool {
	wild := false
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '*', '?':
			wild = true
		case '.':
		default:
			return false
		}
	}
	return wild
}

var diskPrefixes = []string{
	"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "dm-", "md", "mapper/",
	"nbd", "zd", "mem", "kmem", "port", "root",
}

// blockDevice reports whether a path names a disk (or memory) device under
// /dev. /dev/null, /dev/tty, /dev/stdout and the like are not.
func blockDevice(w string) bool {
	p, _ := expandForGuard(w)
	rest, ok := strings.CutPrefix(path.Clean(p), "/dev/")
	if !ok {
		return false
	}
	for _, pre := range diskPrefixes {
		if strings.HasPrefix(rest, pre) {
			return true
		}
	}
	return false
}

var functionKeywordRe = lazyre.New(`function\s+([^\s(){};&|<>]+)\s*(?:\(\s*\))?\s*\{`)

// forkBomb reports whether src defines a shell function whose body calls
// itself through a pipe or in the background (:(){ :|:& };: and its
// renamings), which multiplies processes until the machine stalls.
func forkBomb(src string) bool {
	compact := dropSpace(src)
	for off := 0; ; {
		k := strings.Index(compact[off:], "(){")
		if k < 0 {
			break
		}
		k += off
		off = k + 3
		j := k
		for j > 0 && bombNameByte(compact[j-1]) {
			j--
		}
		name := compact[j:k]
		body := braceBody(compact, k+3)
		if selfFork(body, name) || (strings.HasPrefix(name, "function") && selfFork(body, name[len("function"):])) {
			return true
		}
	}
	for _, m := range functionKeywordRe().FindAllStringSubmatchIndex(src, 16) {
		name := src[m[2]:m[3]]
		if selfFork(dropSpace(braceBody(src, m[1])), name) {
			return true
		}
	}
	return false
}

func dropSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
}

func bombNameByte(c byte) bool {
	return strings.IndexByte(";&|(){}<>'\"$`\\ \t\n\r", c) < 0
}

// braceBody returns the text from i up to the brace closing an already
// opened one (or to the end).
func braceBody(s string, i int) string {
	depth := 1
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return s[i:j]
			}
		}
	}
	return s[i:]
}

func selfFork(body, name string) bool {
	if name == "" {
		return false
	}
	for off := 0; off < len(body); {
		k := strings.Index(body[off:], name)
		if k < 0 {
			return false
		}
		k += off
		end := k + len(name)
		off = k + 1
		if (k > 0 && bombNameByte(body[k-1])) || (end < len(body) && bombNameByte(body[end])) {
			continue // part of a longer word
		}
		piped := k > 0 && body[k-1] == '|' && (k < 2 || body[k-2] != '|')
		after := ""
		if end < len(body) {
			after = body[end:min(end+2, len(body))]
		}
		if piped || after == "|" || (strings.HasPrefix(after, "|") && after != "||") ||
			(strings.HasPrefix(after, "&") && after != "&&") {
			return true
		}
	}
	return false
}
