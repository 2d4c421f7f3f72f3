package mutation_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/engine/filechange"
	"github.com/hubdev/hub/geturl/internal/treetest"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// writeOnly is a session that may write files but not run commands.
var writeOnly = route.Permissions{Write: true}

// fsmonitor is what the attack puts in .git/config: git runs it, through
// the shell, at every git status (shell prompts and editors run one on
// their own).
const fsmonitor = "\tfsmonitor = \"id > pwned.txt; false\"\n"

// gitRepo makes dir a real git repository with one commit and a
// submodule-style gitdir file, and returns a function running git there
// as the operator's shell prompt would.
func gitRepo(t *testing.T, dir string) func(args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	home := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	run("init", "-q", "-b", "main")
	writeTree(t, dir, map[string]string{"a.txt": "a\n"})
	run("add", "a.txt")
	run("commit", "-q", "-m", "one")
	return run
}

// A session with file writes but no terminal cannot make git run a
// command: no route changes .git/config, adds a hook or plants a .git
// file — by the raw tail, content=, a staged blob or a patch — and the
// git status that follows runs nothing. Every refusal is vcs_metadata in
// the contract's error shape; the project is as it was.
func TestWriteOnlySessionCannotRunCodeThroughGit(t *testing.T) {
	e := newEnv(t, writeOnly, nil)
	git := gitRepo(t, e.root)
	writeTree(t, e.root, map[string]string{"sub/a.txt": "a\n"})
	before := treetest.Snapshot(t, e.root)
	enc := transport.Encode
	patch := func(body string) string { return enc("*** Begin Patch\n" + body + "*** End Patch\n") }
	config := "[core]\n" + fsmonitor

	refused := func(u string) {
		t.Helper()
		a := e.do(u)
		if a.OK || a.ErrorCode != "vcs_metadata" || a.Retryable || a.AgentAction != "" || !strings.Contains(a.raw, `"repairHint":"`+filechange.VCSHint) {
			t.Errorf("GET %s: %s", u, a.raw)
		}
	}
	// What the operator's prompt does next runs nothing.
	status := func() {
		t.Helper()
		out := git("status", "--short")
		if _, err := os.Stat(filepath.Join(e.root, "pwned.txt")); err == nil {
			t.Fatalf("git status ran the agent's command: %s", out)
		}
		if strings.Contains(out, "fatal") {
			t.Fatalf("git status: %s", out)
		}
	}

	// The attack as reported: one edit of .git/config, then git status.
	refused(e.m + "/e?path=.git/config&old=" + enc("[core]\n") + "&wait=1500&raw=" + enc(config))
	status()

	// Every other transport and spelling. Staged content first: the same
	// payloads, chunked through /s.
	for blob, body := range map[string]string{
		"cfg":   config,
		"hook":  "#!/bin/sh\nid > pwned.txt\n",
		"patch": "*** Begin Patch\n*** Add File: .git/hooks/post-checkout\n+#!/bin/sh\n+id > pwned.txt\n*** End Patch\n",
	} {
		e.ok(e.m + "/s?blob=" + blob + "&i=0&count=1&raw=" + enc(body))
	}
	for _, u := range []string{
		e.m + "/e?path=" + enc(".git/config") + "&old=" + enc("[core]\n") + "&newBlob=cfg&wait=1500",
		e.m + "/w?path=.git/config&wait=1500&raw=" + enc(config),
		e.m + "/w?path=.git/config&wait=1500&content=" + enc(config),
		e.m + "/w?path=.git/config&blob=cfg&count=1&wait=1500",
		e.m + "/w?path=.git/hooks/post-checkout&blob=hook&wait=1500",
		e.m + "/w?path=/project/.GIT/hooks/pre-commit&wait=1500&raw=id",
		e.m + "/w?path=" + enc(e.root+"/.git/hooks/pre-commit") + "&wait=1500&raw=id",
		e.m + "/w?path=" + enc(".git./config") + "&wait=1500&raw=x",
		e.m + "/w?path=" + enc("GIT~1/config") + "&wait=1500&raw=x",
		e.m + "/w?path=sub/.git&wait=1500&raw=" + enc("gitdir: ../.git\n"),
		e.m + "/a?blob=patch&wait=1500",
		e.m + "/a?wait=1500&raw=" + patch("*** Update File: .git/config\n@@\n [core]\n+"+fsmonitor),
		e.m + "/a?wait=1500&patch=" + patch("*** Add File: .git/hooks/pre-commit\n+id > pwned.txt\n"),
		e.m + "/a?wait=1500&raw=" + patch("*** Add File: sub/.git\n+gitdir: ../.git\n"),
		e.m + "/a?wait=1500&raw=" + patch("*** Update File: sub/a.txt\n*** Move to: .git/hooks/post-merge\n@@\n-a\n+id > pwned.txt\n"),
		e.m + "/a?wait=1500&raw=" + patch("*** Update File: .git/description\n*** Move to: notes.txt\n@@\n-Unnamed\n+Named\n"),
		e.m + "/a?wait=1500&raw=" + patch("*** Delete File: .git/HEAD\n"),
		// The first two sections are fine; the third makes the patch
		// refused whole, so they do not land either.
		e.m + "/a?wait=1500&raw=" + patch("*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: b.txt\n+b\n*** Add File: .git/hooks/pre-push\n+id\n"),
	} {
		refused(u)
	}
	status()
	treetest.Same(t, "the project", before, treetest.Snapshot(t, e.root))

	// The session still writes the project's own files, .gitmodules and
	// .gitignore included, and still reads .git.
	e.done(e.m + "/w?path=.gitignore&wait=1500&raw=" + enc("*.o\n"))
	e.done(e.m + "/a?wait=1500&raw=" + patch("*** Add File: .gitmodules\n+[submodule \"sub\"]\n+\tpath = sub\n"))
	if r := e.ok(e.r + "/r?path=.git/HEAD"); !strings.Contains(r.raw, "refs/heads/main") {
		t.Fatalf("reading .git: %s", r.raw)
	}
	e.ok(e.r + "/t?path=.git/config")
}
