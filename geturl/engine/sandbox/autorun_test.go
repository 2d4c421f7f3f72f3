package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAutorunComponent: the configuration tools run on their own is
// caught in every spelling a file system takes for it, directories at any
// depth and files as the last component; the project's own files, and
// names that merely resemble configuration, are not.
func TestAutorunComponent(t *testing.T) {
	for _, tc := range []struct {
		path string
		want string // "" when the path is not autorun configuration
	}{
		// Claude Code.
		{".claude/settings.json", ".claude"},
		{".claude/settings.local.json", ".claude"},
		{".claude/commands/deploy.md", ".claude"},
		{".claude/hooks/format.sh", ".claude"},
		{".claude/skills/x/SKILL.md", ".claude"},
		{".claude", ".claude"},
		{"packages/web/.claude/settings.json", ".claude"},
		{".mcp.json", ".mcp.json"},
		{"sub/.mcp.json", ".mcp.json"},
		// OpenCode.
		{"opencode.json", "opencode.json"},
		{"opencode.jsonc", "opencode.jsonc"},
		{"sub/dir/opencode.json", "opencode.json"},
		{".opencode/plugin/x.ts", ".opencode"},
		{".opencode/tool/t.ts", ".opencode"},
		{".opencode/command/c.md", ".opencode"},
		{".opencode/agent/a.md", ".opencode"},
		{".opencode/opencode.json", ".opencode"},
		{"tui.json", "tui.json"},
		{"tui.jsonc", "tui.jsonc"},
		// Other agents.
		{".codex/config.toml", ".codex"},
		{".gemini/settings.json", ".gemini"},
		{".cursor/mcp.json", ".cursor"},
		{".cursor/hooks.json", ".cursor"},
		{".windsurf/hooks.json", ".windsurf"},
		{".kiro/hooks/lint.kiro.hook", ".kiro"},
		{".continue/mcpServers/x.yaml", ".continue"},
		{".amazonq/mcp.json", ".amazonq"},
		// Editors.
		{".vscode/tasks.json", ".vscode"},
		{".vscode/settings.json", ".vscode"},
		{".vscode/launch.json", ".vscode"},
		{".idea/workspace.xml", ".idea"},
		{".zed/settings.json", ".zed"},
		{".devcontainer/devcontainer.json", ".devcontainer"},
		{".devcontainer.json", ".devcontainer.json"},
		{"hub.code-workspace", "hub.code-workspace"},
		{"ws/All.Code-Workspace", "All.Code-Workspace"},
		// mise.
		{"mise.toml", "mise.toml"},
		{".mise.toml", ".mise.toml"},
		{"mise.local.toml", "mise.local.toml"},
		{".mise.local.toml", ".mise.local.toml"},
		{"mise.staging.toml", "mise.staging.toml"},
		{".mise.dev.local.toml", ".mise.dev.local.toml"},
		{".config/mise.toml", "mise.toml"},
		{".config/mise/config.toml", "config.toml"},
		{"mise/config.toml", "config.toml"},
		{".config/mise/conf.d/10-node.toml", "10-node.toml"},
		{".mise/config.toml", ".mise"},
		{".mise/tasks/build", ".mise"},
		// Case under every mapping, HFS+ ignorables, Windows trailing dots
		// and spaces, NTFS streams, separators.
		{".Claude/settings.json", ".Claude"},
		{".CLAUDE/settings.json", ".CLAUDE"},
		{".VSCode/tasks.json", ".VSCode"},
		{"OpenCode.JSON", "OpenCode.JSON"},
		{".MCP.json", ".MCP.json"},
		{".cl\u0251ude/x", ""},                        // Latin alpha is another letter
		{".\u0441laude/x", ""},                        // Cyrillic es is another letter
		{".vscode\u200c/tasks.json", ".vscode\u200c"}, // HFS+ ignores the joiner
		{"open\ufeffcode.json", "open\ufeffcode.json"},
		{".claude./settings.json", ".claude."},
		{".claude /settings.json", ".claude "},
		{"opencode.json.", "opencode.json."},
		{"opencode.json . ", "opencode.json . "},
		{".mcp.json::$DATA", ".mcp.json::$DATA"},
		{".vscode::$INDEX_ALLOCATION/tasks.json", ".vscode::$INDEX_ALLOCATION"},
		{`.vscode\tasks.json`, ".vscode"},
		{`sub\.opencode\plugin\x.ts`, ".opencode"},
		{".\u017fettings/x", ""},       // long s, but .settings is nothing
		{".kiro/x", ".kiro"},           // Kelvin sign below
		{".\u212aIRO/x", ".\u212aIRO"}, // Kelvin sign folds to k
		{".\u0130DEA/x", ".\u0130DEA"}, // capital I with dot above
		{".\u0131dea/x", ".\u0131dea"}, // dotless i
		// NTFS 8.3 short names.
		{"CLAUDE~1/settings.json", "CLAUDE~1"},
		{"VSCODE~1/tasks.json", "VSCODE~1"},
		{"vscode~2/tasks.json", "vscode~2"},
		{"VS1F2E~1/tasks.json", "VS1F2E~1"},
		{"OPENCO~1/plugin/x.ts", "OPENCO~1"},
		{"OPENCO~1.JSO", "OPENCO~1.JSO"},
		{"OP12AB~1.JSO", "OP12AB~1.JSO"},
		{"MCP~1.JSO", "MCP~1.JSO"},
		{"DEVCON~1/devcontainer.json", "DEVCON~1"},
		{"DEVCON~1.JSO", "DEVCON~1.JSO"},
		{"TUI~1.JSO", "TUI~1.JSO"},
		{"MISE~1.TOM", "MISE~1.TOM"},
		{"MISELO~1.TOM", "MISELO~1.TOM"},
		{"HUBCOD~1.COD", "HUBCOD~1.COD"},
		{"mise/CONFIG~1.TOM", "CONFIG~1.TOM"},
		{"IDEA~1/workspace.xml", "IDEA~1"},

		{"", ""},
		{"src/main.go", ""},
		{"claude/settings.json", ""},
		{"CLAUDE.md", ""},
		{"AGENTS.md", ""},
		{"docs/.claude.md", ""},
		{".claude.json", ""},
		{".claudeignore", ""},
		{"vscode/tasks.json", ""},
		{".vscodeignore", ""},
		{".vscode-test/x", ""},
		{".idea.md", ""},
		{"opencode.json/x", ""}, // a directory of that name is nothing to OpenCode
		{"opencode.jsonx", ""},
		{"my-opencode.json", ""},
		{"opencode.json5", ""},
		{"mcp.json", ""},
		{".mcp.jsonc", ""},
		{"x.mcp.json", ""},
		{"tui.ts", ""},
		{"mise", ""},
		{"mise.md", ""},
		{"misery.toml", ""},
		{"mise.tomlx", ""},
		{"mise/tasks/build", ""},
		{"mise/other.toml", ""},
		{"crates/mise/Cargo.toml", ""},
		{"conf.d/x.toml", ""},
		{"config.toml", ""},
		{".config/config.toml", ""},
		{"code-workspace", ""},
		{"x.code-workspace.bak", ""},
		{".envrc", ""},
		{".env", ""},
		{".tool-versions", ""},
		{"Makefile", ""},
		{"package.json", ""},
		{".github/workflows/ci.yml", ""},
		{".husky/pre-commit", ""},
		{".pre-commit-config.yaml", ""},
		{".editorconfig", ""},
		{"CLAUDE~", ""},
		{"CLAUDE~x", ""},
		{"CLAUDEX~1", ""},
		{"CL~1", ""},
		{"CLZZZZ~1", ""},
		{"OPENCO~1.TXT", ""},
		{"MCP~1", ""},
		{"ab~1.cod.x", ""},
		{"\xff.claude", ""},
		{".cl\xffaude/x", ""},
	} {
		got, ok := AutorunComponent(tc.path)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("AutorunComponent(%q) = %q, %v; want %q", tc.path, got, ok, tc.want)
		}
	}
}

// FuzzAutorunComponent: whatever the input, the answer names a component
// of it; the separator does not matter; what is configuration stays so
// under more directories above it, and any dressing of a configuration
// name that a file system strips is still caught.
func FuzzAutorunComponent(f *testing.F) {
	for _, s := range []string{".claude/settings.json", "a/b", `x\.VSCODE\tasks.json`, "opencode.json.", "CLAUDE~1", "mise/config.toml", "", "/", "\xff"} {
		f.Add(s, []byte{0, 1, 2})
	}
	f.Fuzz(func(t *testing.T, p string, noise []byte) {
		got, ok := AutorunComponent(p)
		if ok != (got != "") {
			t.Fatalf("AutorunComponent(%q) = %q, %v", p, got, ok)
		}
		if ok && (!strings.Contains(p, got) || strings.ContainsAny(got, `/\`)) {
			t.Fatalf("AutorunComponent(%q) = %q: not a component", p, got)
		}
		if _, back := AutorunComponent(strings.ReplaceAll(p, "/", `\`)); back != ok {
			t.Fatalf("AutorunComponent(%q) = %v, with backslashes %v", p, ok, back)
		}
		if _, deeper := AutorunComponent("a/.b/" + p); ok && !deeper {
			t.Fatalf("AutorunComponent(%q) = true, but not below other directories", p)
		}
		// Dress a configuration name with the noise bytes: a directory
		// anywhere, a file at the end.
		i := int(uint(len(noise)) % uint(len(autorunDirs)))
		dir := dress("."+autorunDirs[i], noise)
		file := dress(autorunFiles[int(uint(len(noise))%uint(len(autorunFiles)))], noise)
		rest := strings.Trim(p, `/\`)
		for _, q := range []string{dir, dir + "/" + p, rest + "/" + dir, rest + "/" + dir + "/x", file, rest + "/" + file} {
			if _, ok := AutorunComponent(q); !ok {
				t.Fatalf("AutorunComponent(%q) = false", q)
			}
		}
	})
}

// TestResolveMutableAutorun: without Allow.Autorun, configuration tools
// run on their own is refused as named, as resolved through symlinks, and
// where a symlink named as such at the root (or directly in such a
// directory there) leads; with it, those paths resolve as ResolveNew
// resolves them. Metadata stays refused either way, and wins.
func TestResolveMutableAutorun(t *testing.T) {
	root := mustReal(t, t.TempDir())
	for rel, body := range map[string]string{
		".claude/settings.json":       "{}\n",
		".claude/local/notes.md":      "n\n",
		".vscode/tasks.json":          "{}\n",
		"opencode.json":               "{}\n",
		"config/mcp.json":             "{}\n",
		"config/claude-settings.json": "{}\n",
		"editor/settings.json":        "{}\n",
		"common/plugin.ts":            "x\n",
		"src/main.go":                 "package main\n",
		"sub/a.txt":                   "a\n",
	} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		".mcp.json":           "config/mcp.json",                // a configuration file kept elsewhere
		".zed":                "editor",                         // a configuration directory kept elsewhere
		".claude/hooks":       "../common",                      // a directory inside one
		".claude/s.json":      "../config/claude-settings.json", // a file inside one
		".cursor":             "cursor-config",                  // dangling: where a create would land
		".idea":               ".",                              // the root itself is not taken for configuration
		"tasks":               ".vscode",                        // a project name leading into configuration
		"sub/.opencode":       "../common",                      // deeper links are not looked for
		"docs/opencode.json":  "../sub/a.txt",                   // ... also files
		".gemini/settings.js": "/nonexistent/outside",           // a link out is not followed for this
	} {
		p := filepath.Join(root, link)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		".claude/settings.json", ".claude/settings.local.json", ".claude/commands/x.md", "/project/.claude/settings.json",
		root + "/.claude/settings.json", ".Claude/settings.json", "CLAUDE~1/settings.json",
		".vscode/tasks.json", ".vscode/settings.json", "opencode.json", "opencode.jsonc", ".opencode/plugin/x.ts",
		"sub/.opencode/plugin/x.ts", "new/dir/.mcp.json", "mise.toml", ".devcontainer/devcontainer.json",
		"tasks/tasks.json",                // named as project, resolved into .vscode
		"config/mcp.json",                 // what .mcp.json leads to
		"editor/settings.json",            // inside what .zed leads to
		"editor/new.json",                 // ... not there yet
		"common/plugin.ts",                // what .claude/hooks leads to
		"config/claude-settings.json",     // what .claude/s.json leads to
		"cursor-config/mcp.json",          // below a dangling link's target
		"sub/../.claude/settings.json",    // cleaned first
		".mcp.json", ".zed/settings.json", // the links themselves, as named
	} {
		if _, err := s.ResolveMutable(p, Allow{}); !errors.Is(err, ErrAutorunConfig) || Code(err) != "autorun_config" {
			t.Errorf("ResolveMutable(%q) = %v, want autorun_config", p, err)
		}
		got, err := s.ResolveMutable(p, Allow{Autorun: true})
		want, werr := s.ResolveNew(p)
		if err != nil || werr != nil || got != want {
			t.Errorf("ResolveMutable(%q, Autorun) = %+v, %v; ResolveNew = %+v, %v", p, got, err, want, werr)
		}
	}
	for _, p := range []string{
		"src/main.go", "src/new.go", "sub/a.txt", "config/other.json", "CLAUDE.md", "AGENTS.md", ".envrc",
		"Makefile", ".gitignore", "x.txt",
		"docs/guide.md", // a sibling of docs/opencode.json, a deeper link
	} {
		got, err := s.ResolveMutable(p, Allow{})
		want, werr := s.ResolveNew(p)
		if err != nil || werr != nil || got != want {
			t.Errorf("ResolveMutable(%q) = %+v, %v; ResolveNew = %+v, %v", p, got, err, want, werr)
		}
	}
	// Metadata is reported as such, also inside configuration.
	for _, p := range []string{".claude/.git/config", ".git/.vscode/tasks.json", "VSCODE~1/.GIT/hooks/x"} {
		for _, allow := range []Allow{{}, {Autorun: true}} {
			if _, err := s.ResolveMutable(p, allow); !errors.Is(err, ErrVCSMetadata) {
				t.Errorf("ResolveMutable(%q, %+v) = %v, want vcs_metadata", p, allow, err)
			}
		}
	}
	// Reads are not this function's business.
	if _, err := s.ResolveExisting(".claude/settings.json"); err != nil {
		t.Errorf("ResolveExisting(.claude/settings.json) = %v", err)
	}
}
