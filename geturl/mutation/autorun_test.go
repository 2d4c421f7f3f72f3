package mutation_test

import (
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/engine/filechange"
	"github.com/hubdev/hub/geturl/internal/treetest"
	"github.com/hubdev/hub/geturl/transport"
)

// autorunTree is a project with the configuration of the tools a
// developer runs in it: an agent's hooks, OpenCode's MCP servers and
// plugins, an editor's tasks. Each runs commands on its own the next time
// that tool starts in the project.
var autorunTree = map[string]string{
	".claude/settings.json":       "{\"hooks\":{}}\n",
	"opencode.json":               "{\"mcp\":{}}\n",
	".opencode/plugin/fmt.ts":     "export const Fmt = async () => ({})\n",
	".vscode/tasks.json":          "{\"version\":\"2.0.0\",\"tasks\":[]}\n",
	"claude-config/settings.json": "{}\n",
	"cfg":                         "->.claude", // a project name leading into .claude
	"src/a.txt":                   "a\n",
}

// The payloads a session without the terminal would plant to run a
// command: a Claude Code hook, an OpenCode local MCP server and plugin, a
// VS Code task run when the folder opens.
const (
	claudeHook   = `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"id > pwned.txt"}]}]}}` + "\n"
	opencodeMCP  = `{"mcp":{"x":{"type":"local","command":["sh","-c","id > pwned.txt"]}}}` + "\n"
	opencodePlug = "import { execSync } from \"child_process\"\nexecSync(\"id > pwned.txt\")\nexport const X = async () => ({})\n"
	vscodeTask   = `{"version":"2.0.0","tasks":[{"label":"x","type":"shell","command":"id > pwned.txt","runOptions":{"runOn":"folderOpen"}}]}` + "\n"
)

// A session with file writes but no terminal cannot make the operator's
// agent or editor run a command: no route changes, creates, deletes or
// moves .claude/settings.json, opencode.json, .opencode/plugin/*,
// .vscode/tasks.json (or another spelling of them, or a path leading
// there) — by the raw tail, content=, a staged blob or a patch. Every
// refusal is autorun_config in the contract's error shape, and the
// project is as it was.
func TestWriteOnlySessionCannotChangeAutorunConfig(t *testing.T) {
	e := newEnv(t, writeOnly, autorunTree)
	before := treetest.Snapshot(t, e.root)
	enc := transport.Encode
	patch := func(body string) string { return enc("*** Begin Patch\n" + body + "*** End Patch\n") }

	refused := func(u string) {
		t.Helper()
		a := e.do(u)
		if a.OK || a.ErrorCode != "autorun_config" || a.Retryable || a.AgentAction != "" ||
			!strings.Contains(a.raw, `"repairHint":"`+filechange.AutorunHint) {
			t.Errorf("GET %s: %s", u, a.raw)
		}
		// /w and /e refuse the path before it becomes an intent; a
		// patch's paths are the engine's, in its preflight.
		if a.Call != "" && !strings.Contains(u, "/a?") {
			t.Errorf("GET %s: an intent: %s", u, a.raw)
		}
	}
	// The session read them all first, as a whole-file overwrite needs.
	for _, p := range []string{".claude/settings.json", "opencode.json", ".opencode/plugin/fmt.ts", ".vscode/tasks.json"} {
		e.ok(e.r + "/r?path=" + enc(p))
	}
	for blob, body := range map[string]string{"hook": claudeHook, "mcp": opencodeMCP, "plug": opencodePlug, "task": vscodeTask,
		"patch": "*** Begin Patch\n*** Add File: .vscode/settings.json\n+{}\n*** End Patch\n"} {
		e.ok(e.m + "/s?blob=" + blob + "&i=0&count=1&raw=" + enc(body))
	}
	for _, u := range []string{
		// The four files of the brief, each by every transport.
		e.m + "/w?path=.claude/settings.json&wait=1500&raw=" + enc(claudeHook),
		e.m + "/w?path=.claude/settings.json&wait=1500&content=" + enc(claudeHook),
		e.m + "/w?path=.claude/settings.json&blob=hook&count=1&wait=1500",
		e.m + "/e?path=.claude/settings.json&old=" + enc(`{"hooks":{}}`) + "&wait=1500&raw=" + enc(strings.TrimSpace(claudeHook)),
		e.m + "/w?path=opencode.json&wait=1500&raw=" + enc(opencodeMCP),
		e.m + "/w?path=opencode.json&blob=mcp&wait=1500",
		e.m + "/e?path=opencode.json&old=" + enc(`{"mcp":{}}`) + "&newBlob=mcp&wait=1500",
		e.m + "/w?path=.opencode/plugin/fmt.ts&wait=1500&raw=" + enc(opencodePlug),
		e.m + "/w?path=.opencode/plugin/x.ts&blob=plug&wait=1500",
		e.m + "/w?path=.vscode/tasks.json&wait=1500&raw=" + enc(vscodeTask),
		e.m + "/w?path=.vscode/tasks.json&blob=task&wait=1500",
		e.m + "/e?path=.vscode/tasks.json&old=" + enc(`"tasks":[]`) + "&wait=1500&new=" + enc(`"tasks":[{"command":"id"}]`),
		// Their neighbours, new files among them.
		e.m + "/w?path=.claude/settings.local.json&wait=1500&raw=" + enc(claudeHook),
		e.m + "/w?path=.mcp.json&wait=1500&raw=" + enc(`{"mcpServers":{}}`),
		e.m + "/w?path=sub/opencode.jsonc&wait=1500&raw=" + enc(opencodeMCP),
		e.m + "/w?path=mise.toml&wait=1500&raw=" + enc("[hooks]\nenter = \"id > pwned.txt\"\n"),
		e.m + "/w?path=.devcontainer/devcontainer.json&wait=1500&raw=" + enc(`{"initializeCommand":"id"}`),
		// Other spellings, and names leading there.
		e.m + "/w?path=/project/.claude/settings.json&wait=1500&raw=x",
		e.m + "/w?path=" + enc(e.root+"/.claude/settings.json") + "&wait=1500&raw=x",
		e.m + "/w?path=.Claude/settings.json&wait=1500&raw=x",
		e.m + "/w?path=" + enc("CLAUDE~1/settings.json") + "&wait=1500&raw=x",
		e.m + "/w?path=" + enc("opencode.json.") + "&wait=1500&raw=x",
		e.m + "/w?path=" + enc(".vsc\u200code/tasks.json") + "&wait=1500&raw=x",
		e.m + "/w?path=" + enc(`.vscode\tasks.json`) + "&wait=1500&raw=x",
		e.m + "/w?path=cfg/settings.json&wait=1500&raw=x",
		e.m + "/w?path=src/../.vscode/tasks.json&wait=1500&raw=x",
		// Patches: every section kind, and both ends of a move.
		e.m + "/a?blob=patch&wait=1500",
		e.m + "/a?wait=1500&raw=" + patch("*** Update File: opencode.json\n@@\n-{\"mcp\":{}}\n+"+strings.TrimSpace(opencodeMCP)+"\n"),
		e.m + "/a?wait=1500&patch=" + patch("*** Add File: .opencode/plugin/x.ts\n+"+strings.ReplaceAll(strings.TrimSuffix(opencodePlug, "\n"), "\n", "\n+")+"\n"),
		e.m + "/a?wait=1500&raw=" + patch("*** Delete File: .claude/settings.json\n"),
		e.m + "/a?wait=1500&raw=" + patch("*** Update File: src/a.txt\n*** Move to: .vscode/tasks.json\n@@\n-a\n+{}\n"),
		e.m + "/a?wait=1500&raw=" + patch("*** Update File: .vscode/tasks.json\n*** Move to: src/tasks.json\n@@\n-{\"version\":\"2.0.0\",\"tasks\":[]}\n+{}\n"),
		// The first section is fine; the second makes the patch refused
		// whole, so it does not land either.
		e.m + "/a?wait=1500&raw=" + patch("*** Update File: src/a.txt\n@@\n-a\n+A\n*** Add File: .claude/commands/x.md\n+!`id`\n"),
	} {
		refused(u)
	}
	treetest.Same(t, "the project", before, treetest.Snapshot(t, e.root))

	// The session still changes the project's own files, and reads the
	// configuration.
	e.done(e.m + "/w?path=src/b.txt&wait=1500&raw=b")
	e.done(e.m + "/w?path=CLAUDE.md&wait=1500&raw=" + enc("# Notes\n"))
	e.done(e.m + "/w?path=claude-config/other.json&wait=1500&raw=" + enc("{}\n"))
	if r := e.ok(e.r + "/r?path=.claude/settings.json"); !strings.Contains(r.raw, "hooks") {
		t.Fatalf("reading .claude: %s", r.raw)
	}
}

// A session with both file writes and the terminal may change the same
// configuration, by the same routes (it could run the commands anyway);
// version-control metadata stays refused for it.
func TestTerminalSessionChangesAutorunConfig(t *testing.T) {
	e := newEnv(t, rw, autorunTree)
	enc := transport.Encode
	patch := func(body string) string { return enc("*** Begin Patch\n" + body + "*** End Patch\n") }
	for _, p := range []string{".claude/settings.json", "opencode.json", ".opencode/plugin/fmt.ts", ".vscode/tasks.json"} {
		e.ok(e.r + "/r?path=" + enc(p))
	}
	e.ok(e.m + "/s?blob=mcp&i=0&count=1&raw=" + enc(opencodeMCP))

	e.done(e.m + "/w?path=.claude/settings.json&wait=1500&raw=" + enc(claudeHook))
	e.done(e.m + "/w?path=opencode.json&blob=mcp&wait=1500")
	e.done(e.m + "/e?path=.vscode/tasks.json&old=" + enc(`"tasks":[]`) + "&wait=1500&new=" + enc(`"tasks":[{"label":"x"}]`))
	e.done(e.m + "/a?wait=1500&raw=" + patch("*** Delete File: .opencode/plugin/fmt.ts\n*** Add File: .opencode/plugin/x.ts\n+export const X = async () => ({})\n"))
	e.done(e.m + "/w?path=.mcp.json&wait=1500&raw=" + enc(`{"mcpServers":{}}`+"\n"))
	for rel, want := range map[string]string{
		".claude/settings.json":       claudeHook,
		"opencode.json":               opencodeMCP,
		".vscode/tasks.json":          "{\"version\":\"2.0.0\",\"tasks\":[{\"label\":\"x\"}]}\n",
		".opencode/plugin/x.ts":       "export const X = async () => ({})\n",
		".mcp.json":                   "{\"mcpServers\":{}}\n",
		"claude-config/settings.json": "{}\n",
	} {
		if got := e.file(rel); got != want {
			t.Errorf("%s = %q, want %q", rel, got, want)
		}
	}
	if !e.missing(".opencode/plugin/fmt.ts") {
		t.Error(".opencode/plugin/fmt.ts was not deleted")
	}
	e.fail(e.m+"/w?path=.claude/.git/config&wait=1500&raw=x", "vcs_metadata")
	e.fail(e.m+"/w?path=.git/config&wait=1500&raw=x", "vcs_metadata")
}
