package search

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hubdev/hub/hub/childenv"
)

// rgArgs is the fixed part of every rg command line. Each flag keeps rg to
// the rules the Go engine implements:
//
//	--no-config          a user's RIPGREP_CONFIG_PATH could add --follow
//	--json               structured output, paths and lines as bytes
//	--sort path          one deterministic depth-first, name-sorted order
//	--no-ignore --hidden no .gitignore magic: SkipDirs is the only rule
//	--text               binary files are judged by us (NUL in the first
//	                     8000 bytes), not by rg's stop-at-first-NUL
//	--encoding none      no BOM sniffing or transcoding
//	--no-messages        unreadable files are skipped quietly, as in Go
//
// Symlinks are not followed (no -L) and the search runs in the target
// directory on ".", so --glob patterns are relative to it.
var rgArgs = []string{"--no-config", "--json", "--sort", "path", "--no-ignore", "--hidden",
	"--text", "--encoding", "none", "--no-messages"}

type rgText struct {
	Text  *string `json:"text"`
	Bytes *string `json:"bytes"`
}

func (t rgText) bytes() ([]byte, bool) {
	switch {
	case t.Text != nil:
		return []byte(*t.Text), true
	case t.Bytes != nil:
		b, err := base64.StdEncoding.DecodeString(*t.Bytes)
		return b, err == nil
	}
	return nil, false
}

type rgMessage struct {
	Type string `json:"type"`
	Data struct {
		Path       rgText `json:"path"`
		Lines      rgText `json:"lines"`
		LineNumber int    `json:"line_number"`
		Submatches []struct {
			Start int `json:"start"`
		} `json:"submatches"`
	} `json:"data"`
}

// grepRG runs rg. ran is false when rg failed before searching (it could
// not start, or refused the pattern): the caller then runs the Go engine.
func (s *Searcher) grepRG(ctx context.Context, t target, m *matcher, include []string, lim Limits) (res GrepResult, ran bool) {
	if !rgReadsGlobs(include, backslashPaths) {
		return GrepResult{}, false
	}
	dir, arg := t.host, "."
	if !t.dir {
		dir, arg = filepath.Dir(t.host), "./"+filepath.Base(t.host)
	}
	args := append([]string(nil), rgArgs...)
	args = append(args, "--max-filesize", strconv.FormatInt(lim.MaxFileBytes, 10))
	if t.dir {
		for _, g := range include {
			args = append(args, "--glob", g)
		}
		for _, d := range SkipDirs {
			args = append(args, "--glob", "!"+d+"/")
		}
	}
	args = append(args, m.rgArgs...)
	args = append(args, "--", arg)

	// rg starts in the directory as resolved, held open (rgDir).
	cmdDir, release, err := rgDir(dir)
	if err != nil {
		return GrepResult{}, false
	}
	defer release()
	run, stop := context.WithCancel(ctx)
	defer stop()
	cmd := exec.CommandContext(run, s.RG, args...)
	cmd.Dir = cmdDir
	cmd.Env = rgEnv()
	cmd.WaitDelay = time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return GrepResult{}, false
	}
	if err := cmd.Start(); err != nil {
		return GrepResult{}, false
	}
	res = GrepResult{Engine: "rg", Matches: []Match{}}
	finished, full := false, false
	sc := bufio.NewScanner(out)
	// A match line carries the whole source line, which may be as long as
	// a file rg agrees to search.
	sc.Buffer(make([]byte, 64<<10), int(2*lim.MaxFileBytes)+(64<<10))
	var file string // virtual path of the current file; "" while skipped
	var src *rgFile // the current file as we opened it (rgverify.go)
	defer func() { src.close() }()
	for sc.Scan() {
		var msg rgMessage
		if json.Unmarshal(sc.Bytes(), &msg) != nil {
			continue
		}
		switch msg.Type {
		case "begin":
			file = ""
			src.close()
			src = nil
			p, ok := msg.Data.Path.bytes()
			rel, inside := rgRel(string(p), arg, backslashPaths)
			if !ok || !inside {
				continue
			}
			host := t.host
			if t.dir {
				host = filepath.Join(dir, filepath.FromSlash(rel))
			}
			if f, ok := openRGFile(host); ok {
				file, src = t.child(rel), f
			}
		case "match":
			if file == "" {
				continue
			}
			line, ok := msg.Data.Lines.bytes()
			if !ok || !src.holds(msg.Data.LineNumber, line) {
				continue
			}
			if len(res.Matches) == lim.MaxResults {
				full = true
				break
			}
			at := 0
			if len(msg.Data.Submatches) > 0 {
				at = msg.Data.Submatches[0].Start
			}
			res.Matches = append(res.Matches, newMatch(file, msg.Data.LineNumber, line, at, lim.MaxLineBytes))
		case "summary":
			finished = true
		}
		if full {
			break
		}
	}
	stop()
	cmd.Wait()
	switch {
	case full:
		res.Truncated, res.Reason = true, ReasonMaxResults
	case ctx.Err() != nil:
		res.Truncated, res.Reason = true, ReasonTimeout
	case !finished:
		return GrepResult{}, false
	}
	return res, true
}

// backslashPaths says rg prints paths with the OS's separator '\'
// (Windows), where '\' can be in no name; elsewhere it is a name's
// byte like any other.
const backslashPaths = filepath.Separator == '\\'

// rgRel turns a path rg printed into the contract's slash-separated path
// relative to the target, refusing anything that is not below it (rg
// does not follow symlinks, so nothing should be). arg is what rg was
// asked to search: "." for a directory, "./name" for one file, which rg
// prints back as given and then rel is "". With backslash (Windows), rg
// joins names with '\' (".\src\main.go"), which becomes '/'; a path
// naming a volume or a stream (any ':') is refused there.
func rgRel(p, arg string, backslash bool) (string, bool) {
	if backslash {
		if strings.ContainsRune(p, ':') {
			return "", false
		}
		p = strings.ReplaceAll(p, `\`, "/")
		arg = strings.ReplaceAll(arg, `\`, "/")
	}
	if arg != "." {
		return "", p == arg
	}
	rel := path.Clean(strings.TrimPrefix(p, "./"))
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// rgReadsGlobs says rg reads the include globs as includeSet does. A
// backslash escapes in both on unix; on Windows, where it is also the
// path separator, rg's reading of one is not what includeSet's is known
// to be, so a search with such a glob is left to the Go engine there.
func rgReadsGlobs(globs []string, backslash bool) bool {
	if backslash {
		for _, g := range globs {
			if strings.Contains(g, `\`) {
				return false
			}
		}
	}
	return true
}

// rgEnv is the environment rg runs with: the hub's without its secrets
// (childenv: any process of the user can read a child's environment) and
// without anything that configures rg.
func rgEnv() []string {
	env := childenv.Environ()
	n := 0
	for _, kv := range env {
		if !strings.HasPrefix(kv, "RIPGREP_") {
			env[n] = kv
			n++
		}
	}
	return env[:n]
}
