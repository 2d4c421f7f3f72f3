package terminal

import "strings"

// The guard's reading of PowerShell text, for powershell and pwsh started
// from cmd.exe (guardcmd.go). Forgiving like the other readers: braces,
// parentheses, ";", "|", "&", "&&", "||" and line breaks all end a
// statement (a script block's body is then judged as statements of its
// own, which sees more); '…' is literal ('' a quote), "…" and bare words
// take ` as an escape; $env:NAME, ${env:NAME}, $HOME and a leading ~
// become the cmd variables winRootish knows, any other variable an
// unknown one.

// psUnknown stands for a variable the guard cannot know (winExpand finds
// no such name).
const psUnknown = "%?%"

// psStatements splits PowerShell text into statements of words.
func psStatements(src string) [][]string {
	var out [][]string
	var cur []string
	var w strings.Builder
	in := false
	end := func() {
		if in {
			cur = append(cur, psWord(w.String()))
			w.Reset()
			in = false
		}
	}
	stmt := func() {
		end()
		if len(cur) > 0 {
			out = append(out, cur)
		}
		cur = nil
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case ' ', '\t':
			end()
		case '\r', '\n', ';', '|', '&', '{', '}', '(', ')':
			stmt()
		case '$':
			in = true
			w.WriteByte(c)
			if i+1 < len(src) && src[i+1] == '{' { // ${name}: one word
				end := strings.IndexByte(src[i:], '}')
				if end < 0 {
					end = len(src) - i - 1
				}
				w.WriteString(src[i+1 : i+end+1])
				i += end
			}
		case '`':
			in = true
			if i+1 < len(src) {
				i++
				w.WriteByte(src[i])
			}
		case '\'':
			in = true
			for i++; i < len(src); i++ {
				if src[i] == '\'' {
					if i+1 < len(src) && src[i+1] == '\'' {
						w.WriteByte('\'')
						i++
						continue
					}
					break
				}
				w.WriteByte(src[i])
			}
		case '"':
			in = true
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '`' && i+1 < len(src) {
					i++
				}
				w.WriteByte(src[i])
			}
		default:
			in = true
			w.WriteByte(c)
		}
	}
	stmt()
	return out
}

// psWord rewrites a word's variables into cmd's %NAME% form for winRootish.
func psWord(w string) string {
	if rest, ok := strings.CutPrefix(w, "~"); ok && (rest == "" || rest[0] == '\\' || rest[0] == '/') {
		w = "%USERPROFILE%" + rest
	}
	var b strings.Builder
	for i := 0; i < len(w); {
		if w[i] != '$' {
			b.WriteByte(w[i])
			i++
			continue
		}
		rest := w[i+1:]
		if r, ok := cutFold(rest, "{env:"); ok {
			name, _, _ := strings.Cut(r, "}")
			b.WriteString("%" + name + "%")
			i += 1 + len("{env:") + len(name) + 1
			continue
		}
		if r, ok := cutFold(rest, "env:"); ok {
			n := 0
			for n < len(r) && (isNameByte(r[n]) || r[n] == '(' || r[n] == ')') {
				n++
			}
			b.WriteString("%" + r[:n] + "%")
			i += 1 + len("env:") + n
			continue
		}
		n := 0
		for n < len(rest) && isNameByte(rest[n]) {
			n++
		}
		switch {
		case n == 0:
			b.WriteByte('$')
		case strings.EqualFold(rest[:n], "home"):
			b.WriteString("%USERPROFILE%")
		default:
			b.WriteString(psUnknown)
		}
		i += 1 + n
	}
	return b.String()
}

// psRemove are Remove-Item and its aliases.
var psRemove = map[string]bool{
	"remove-item": true, "ri": true, "rm": true, "rmdir": true, "rd": true, "del": true, "erase": true,
}

func (g *guard) checkPS(src string, depth int) Refusal {
	if !g.budget(src, depth) {
		return Refusal{}
	}
	dir := ""
	for _, words := range psStatements(src) {
		name := strings.ToLower(words[0])
		if k := strings.LastIndexByte(name, '\\'); k >= 0 {
			name = name[k+1:] // a module-qualified cmdlet (a program's path: cmdName drops it again)
		}
		args := words[1:]
		switch {
		case psRemove[name]:
			if r := checkPSRemove(args, func(p string) bool { return winRootish(p, dir, g.start) }); r.Rule != "" {
				return r
			}
			continue
		case name == "format-volume", name == "clear-disk", name == "initialize-disk", name == "remove-partition":
			return Refusal{RuleMkfs, name + " erases a disk or volume"}
		case name == "stop-computer", name == "restart-computer":
			return Refusal{RulePower, name + " changes the machine's power state"}
		case name == "iex", name == "invoke-expression":
			if len(args) > 0 {
				if r := g.checkPS(strings.Join(args, " "), depth+1); r.Rule != "" {
					return r
				}
			}
			continue
		case name == "set-location", name == "sl", name == "cd", name == "chdir", name == "push-location", name == "pushd":
			if ops := psOperands(args); len(ops) > 0 {
				t, _ := winExpand(ops[0])
				if r := winResolve(t, dir, g.start); r != "" {
					dir = parseWinPath(r).String()
				}
			}
			continue
		}
		// A native program: judged as cmd would start it.
		c := &cmdCommand{words: words, raws: words}
		for i := range words {
			c.rest = append(c.rest, strings.Join(words[i:], " "))
		}
		if r := g.checkCmdCommand(c, depth, &dir); r.Rule != "" {
			return r
		}
	}
	return Refusal{}
}

// psValued are common parameters of Remove-Item that take a value.
var psValued = []string{"filter", "include", "exclude", "credential", "stream", "erroraction", "ea",
	"warningaction", "wa", "informationaction", "infa", "errorvariable", "ev", "outvariable", "ov"}

// psOperands drops -Name parameters (and the values of psValued ones);
// -Path and -LiteralPath values are operands.
func psOperands(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			out = append(out, a)
			continue
		}
		name, _, hasVal := strings.Cut(strings.ToLower(a[1:]), ":")
		isPath := len(name) >= 1 && (strings.HasPrefix("path", name) || strings.HasPrefix("literalpath", name) ||
			name == "lp" || name == "pspath")
		switch {
		case isPath && hasVal:
			out = append(out, a[strings.IndexByte(a, ':')+1:])
		case isPath:
			if i+1 < len(args) {
				out = append(out, args[i+1])
				i++
			}
		case !hasVal:
			for _, v := range psValued {
				if name == v {
					i++
					break
				}
			}
		}
	}
	return out
}

// checkPSRemove refuses Remove-Item -Recurse of a path rootish judges so.
func checkPSRemove(args []string, rootish func(string) bool) Refusal {
	recursive := false
	for _, a := range args {
		name, val, _ := strings.Cut(strings.ToLower(a), ":")
		if len(name) >= 2 && name[0] == '-' && strings.HasPrefix("-recurse", name) && val != "$false" {
			recursive = true
		}
	}
	if !recursive {
		return Refusal{}
	}
	for _, t := range psOperands(args) {
		for _, p := range strings.Split(t, ",") { // an array of paths
			if rootish(strings.TrimSpace(p)) {
				return Refusal{RuleRmRoot, "Remove-Item -Recurse of " + rootishWin}
			}
		}
	}
	return Refusal{}
}
