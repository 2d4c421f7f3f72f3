package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// geturlEditors is how many files the /e load edits, one per caller.
const geturlEditors = 16

// geturlSession is a served project and a session on it: the Init URL
// and the read and mutation bases its Init answer gives.
type geturlSession struct {
	dir        string
	init, r, m string
	edits      []int // e<k>.txt holds v<edits[k]>; only caller k touches it
}

// geturlSetup registers a project on srv's hub (`hub geturl project add`,
// `session new`, as a user does) or, on a reference, names the Init URL
// its BENCH_TOKEN opens; then fetches Init for the bases. The project is
// a 4 KiB file four.ts, eight 2 KiB ones, and one small file per editor.
func geturlSetup(ctx context.Context, l *Load, srv *Server, s Secrets) (*geturlSession, error) {
	if srv.geturl != nil {
		return srv.geturl, nil
	}
	g := &geturlSession{dir: filepath.Join(srv.Home, "project"), edits: make([]int, geturlEditors)}
	if err := os.MkdirAll(g.dir, 0o700); err != nil {
		return nil, err
	}
	line := strings.Repeat("x", 63) + "\n"
	files := map[string]string{"four.ts": strings.Repeat(line, 64)}
	for i := range 8 {
		files[fmt.Sprintf("f%d.ts", i)] = strings.Repeat(line, 32)
	}
	for k := range geturlEditors {
		files[fmt.Sprintf("e%d.txt", k)] = "v0\n"
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(g.dir, name), []byte(body), 0o600); err != nil {
			return nil, err
		}
	}
	if srv.Kind == "hub" {
		hub := func(args ...string) ([]byte, error) {
			cmd := exec.CommandContext(ctx, srv.Bin, append([]string{"geturl"}, args...)...)
			cmd.Env = srv.Env
			out, err := cmd.Output()
			if err != nil {
				return nil, fmt.Errorf("hub geturl %s: %v (%s)", strings.Join(args, " "), err, bytes.TrimSpace(stderrOf(err)))
			}
			return out, nil
		}
		if _, err := hub("project", "add", "--name", "bench", "--write", "--json", g.dir); err != nil {
			return nil, err
		}
		out, err := hub("session", "new", "--project", "bench", "--json")
		if err != nil {
			return nil, err
		}
		var sess struct{ InitURL string }
		if err := json.Unmarshal(out, &sess); err != nil || sess.InitURL == "" {
			return nil, fmt.Errorf("hub geturl session new: %.200s", out)
		}
		g.init = sess.InitURL
	} else {
		g.init = l.base(srv) + "/v0/init/" + s.Token
	}
	hc := newHTTPClient(1)
	defer hc.CloseIdleConnections()
	req, _ := http.NewRequest("GET", g.init, nil)
	body, err := fetch(hc, req)
	if err != nil {
		return nil, err
	}
	var in struct {
		OK    bool
		Bases struct{ R, M string }
	}
	if err := json.Unmarshal(body, &in); err != nil || !in.OK || in.Bases.R == "" {
		return nil, fmt.Errorf("geturl Init: %.300s", body)
	}
	g.r, g.m = in.Bases.R, in.Bases.M
	srv.geturl = g
	return g, nil
}

func stderrOf(err error) []byte {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.Stderr
	}
	return nil
}

// geturlLoad is a GET load: every op fetches url(g, caller) and checks
// the answer says ok.
func geturlLoad(name, node string, s Secrets, url func(g *geturlSession, caller int) string) *Load {
	l := &Load{Name: name, Adapter: "geturl", Section: "port: 0\ncontrol_port: 0\n", Node: node, Unit: "op"}
	l.Connect = func(ctx context.Context, srv *Server, callers int) (*Clients, error) {
		g, err := geturlSetup(ctx, l, srv, s)
		if err != nil {
			return nil, err
		}
		hc := newHTTPClient(callers)
		c := &Clients{Close: hc.CloseIdleConnections}
		for i := range callers {
			c.Ops = append(c.Ops, func() (int64, error) {
				req, _ := http.NewRequest("GET", url(g, i), nil)
				body, err := fetch(hc, req)
				if err == nil && !bytes.Contains(body, []byte(`"ok":true`)) {
					err = fmt.Errorf("%s: %.300s", name, body)
				}
				return 1, err
			})
		}
		return c, nil
	}
	return l
}

func geturlInit(s Secrets) *Load {
	return geturlLoad("geturl Init", "geturl.js", s, func(g *geturlSession, _ int) string { return g.init })
}

func geturlRead(s Secrets) *Load {
	return geturlLoad("geturl `/r` of a 4 KiB file", "", s, func(g *geturlSession, _ int) string { return g.r + "/r?path=four.ts" })
}

func geturlGrep(s Secrets) *Load {
	return geturlLoad("geturl `/g` (literal, 25 files, no match)", "", s, func(g *geturlSession, _ int) string { return g.r + "/g?path=.&raw=xxxxyz" })
}

// geturlEdit is one journaled /e per op: caller k edits e<k>.txt from
// v<n> to v<n+1>, so every call is a new intent (the journal replays a
// repeated one instead of doing it).
func geturlEdit(s Secrets) *Load {
	return geturlLoad("geturl journaled `/e`", "", s, func(g *geturlSession, k int) string {
		n := g.edits[k%geturlEditors]
		g.edits[k%geturlEditors]++
		return g.m + "/e?path=e" + strconv.Itoa(k%geturlEditors) + ".txt&old=v" + strconv.Itoa(n) + "&new=v" + strconv.Itoa(n+1) + "&wait=1000"
	})
}
