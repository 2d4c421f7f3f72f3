package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
)

// autorunDirs are directories in which a developer's tools keep their
// configuration for a project, and whose contents make those tools run
// commands on their own, without anyone deciding to run anything (each
// name without its leading dot). Everything below one counts, and the
// name itself.
var autorunDirs = []string{
	"claude",       // Claude Code: settings.json hooks run shell commands on tool events; skills carry allowed-tools; hook scripts live here
	"opencode",     // OpenCode: plugins and custom tools are imported when the project loads; its opencode.json
	"codex",        // Codex CLI: config.toml (MCP servers, notify, hooks)
	"gemini",       // Gemini CLI: settings.json (MCP servers, hooks, tool discovery command)
	"cursor",       // Cursor: mcp.json, hooks.json, environment.json
	"windsurf",     // Windsurf: hooks
	"kiro",         // Kiro: agent hooks run shell commands on file events
	"continue",     // Continue: MCP servers
	"amazonq",      // Amazon Q Developer: MCP servers
	"vscode",       // VS Code and its forks: tasks run on folder open, settings naming executables, mcp.json
	"idea",         // JetBrains IDEs: run configurations, startup tasks
	"zed",          // Zed: language server binaries, tasks
	"devcontainer", // Dev Containers: initializeCommand runs on the host
	"mise",         // mise: config.toml (hooks, env that runs commands at every prompt)
}

// autorunFiles are file names a tool looks for in the directory it runs
// in and the ones above it, whose contents it runs on its own. They count
// as the last component of a path only.
var autorunFiles = []string{
	"opencode.json", "opencode.jsonc", // OpenCode: local MCP servers started with the project, plugins
	"tui.json", "tui.jsonc", // OpenCode's terminal UI: plugins
	".mcp.json",          // Claude Code: project MCP servers
	".devcontainer.json", // Dev Containers, the one-file form
}

// AutorunComponent reports whether the path p, relative to a project
// root, names configuration that a developer's tools execute on their
// own: an agent (Claude Code, OpenCode, Codex, Gemini CLI, Cursor, ...)
// starting in the project, an editor opening it, a shell prompt entering
// it. It returns the component of p (split at '/' and at '\') that makes
// it so, as it appears in p.
//
// These are
//
//   - any component naming a directory of autorunDirs (.claude,
//     .opencode, .vscode, .idea, .devcontainer, .mise, ...): the
//     directory and everything below it;
//   - a last component naming a file of autorunFiles (opencode.json,
//     opencode.jsonc, tui.json, tui.jsonc, .mcp.json,
//     .devcontainer.json);
//   - mise's configuration files: a last component mise.toml,
//     mise.<anything>.toml, with or without a leading dot; config.toml
//     directly in a directory named mise (mise/config.toml,
//     .config/mise/config.toml); any .toml in mise/conf.d;
//   - a VS Code workspace file, *.code-workspace.
//
// Components are reduced as VCSComponent reduces them (case under every
// Unicode case mapping, HFS+ ignorable code points, trailing dots and
// spaces, NTFS streams) and NTFS 8.3 short names count for the long
// names they abbreviate (VSCODE~1, CLAUDE~1, OPENCO~1.JSO, MCP~1.JSO).
// It is pure: it looks at the string only.
func AutorunComponent(p string) (string, bool) {
	var buf, pbuf, gbuf [64]rune // a name of more runes grows them on the heap
	var parent, grand []rune     // the two components before name, reduced
	for len(p) > 0 {
		name, last := p, true
		for i := 0; i < len(p); i++ {
			if p[i] == '/' || p[i] == '\\' {
				name, p, last = p[:i], p[i+1:], false
				break
			}
		}
		if last {
			p = ""
		}
		c := reduce(name, buf[:0])
		if isAutorunDir(c) || last && isAutorunFile(c, parent, grand) {
			return name, true
		}
		grand = append(gbuf[:0], parent...)
		parent = append(pbuf[:0], c...)
	}
	return "", false
}

// isAutorunDir reports whether c (reduced) names one of autorunDirs.
func isAutorunDir(c []rune) bool {
	if len(c) > 1 && c[0] == '.' {
		for _, d := range autorunDirs {
			if equalRunes(c[1:], d) {
				return true
			}
		}
		return false
	}
	if s, ok := parseShort(c); ok {
		for _, d := range autorunDirs {
			if s.of(d, "", false) {
				return true
			}
		}
	}
	return false
}

// isAutorunFile reports whether c (reduced), the last component of a
// path, is a configuration file (see AutorunComponent); parent and grand
// are the two components before it, reduced.
func isAutorunFile(c, parent, grand []rune) bool {
	for _, f := range autorunFiles {
		if equalRunes(c, f) {
			return true
		}
	}
	if isMiseFile(c) || hasSuffix(c, ".code-workspace") {
		return true
	}
	inMise := isName(parent, "mise")
	if inMise && isName(c, "config.toml") || isName(parent, "conf.d") && isName(grand, "mise") && hasSuffix(c, ".toml") {
		return true
	}
	s, ok := parseShort(c)
	if !ok {
		return false
	}
	for _, f := range autorunFiles {
		if base, ext := shortParts(f); s.of(base, ext, false) {
			return true
		}
	}
	return s.of("mise", "toml", true) || // mise.toml, mise.local.toml, .mise.toml, ...
		s.of("", "code-workspace", true) ||
		inMise && s.of("config", "toml", false) ||
		isName(parent, "conf.d") && isName(grand, "mise") && s.of("", "toml", true)
}

// isMiseFile reports whether c (reduced) is mise.toml or
// mise.<anything>.toml, with or without one leading dot.
func isMiseFile(c []rune) bool {
	if len(c) > 0 && c[0] == '.' {
		c = c[1:]
	}
	return len(c) >= len("mise.toml") && hasPrefix(c, "mise.") && hasSuffix(c, ".toml")
}

// isName reports whether c (reduced) is the long name n or a short name
// of it.
func isName(c []rune, n string) bool {
	if equalRunes(c, n) {
		return true
	}
	s, ok := parseShort(c)
	if !ok {
		return false
	}
	base, ext := shortParts(n)
	return s.of(base, ext, false)
}

// shortParts splits a long name (lower case ASCII) the way Windows does
// before it makes up a short name: leading dots dropped, the extension
// after the last remaining dot, the other dots of the base dropped.
func shortParts(n string) (base, ext string) {
	for len(n) > 0 && n[0] == '.' {
		n = n[1:]
	}
	dot := -1
	for i := len(n) - 1; i >= 0; i-- {
		if n[i] == '.' {
			dot = i
			break
		}
	}
	if dot >= 0 {
		n, ext = n[:dot], n[dot+1:]
	}
	b := make([]byte, 0, len(n))
	for i := 0; i < len(n); i++ {
		if n[i] != '.' {
			b = append(b, n[i])
		}
	}
	return string(b), ext
}

func hasPrefix(rs []rune, s string) bool { return len(rs) >= len(s) && equalRunes(rs[:len(s)], s) }

func hasSuffix(rs []rune, s string) bool {
	return len(rs) >= len(s) && equalRunes(rs[len(rs)-len(s):], s)
}

// autorunLink reports whether host (an absolute path inside the root,
// every symlink resolved) lies where a symlink named as autorun
// configuration leads: one at the root, or directly in one of the
// autorun directories at the root (.mcp.json -> config/mcp.json,
// .vscode -> editor, .claude/settings.json -> ../config/claude.json).
// Changing the link's target is changing the configuration. Links deeper
// in the tree are not looked for (see the package documentation).
func (s *Scope) autorunLink(host string) bool {
	for _, name := range names(s.root) {
		if _, ok := AutorunComponent(name); !ok {
			continue
		}
		p := filepath.Join(s.root, name)
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
		case fi.Mode()&fs.ModeSymlink != 0:
			if s.leadsTo(p, host) {
				return true
			}
		case fi.IsDir():
			for _, inner := range names(p) {
				q := filepath.Join(p, inner)
				if fi, err := os.Lstat(q); err == nil && fi.Mode()&fs.ModeSymlink != 0 && s.leadsTo(q, host) {
					return true
				}
			}
		}
	}
	return false
}

// names lists the entries of directory dir, unsorted (none when it cannot
// be read).
func names(dir string) []string {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	n, _ := f.Readdirnames(-1)
	return n
}

// leadsTo reports whether the symlink link leads to host or to a
// directory host lies in; a dangling link counts for where a create
// through it would land. A link to the root itself or above it (.vscode
// -> .) is not taken to make the whole project configuration.
func (s *Scope) leadsTo(link, host string) bool {
	dest, missing, err := s.walk(link)
	if err != nil {
		return false
	}
	if missing != "" {
		dest = filepath.Join(dest, missing)
	}
	return dest != s.root && s.rules.within(s.root, dest) && s.rules.within(dest, host)
}
