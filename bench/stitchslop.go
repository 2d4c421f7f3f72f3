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
	"time"
)

// stitchslopPage connects a scripted Stitch Slop tab to the load's bridge
// on srv: the token handshake (armed with `hub stitchslop pair` on a hub,
// taken from BENCH_TOKEN by a reference), its one tool announced, every
// command answered at once on the socket's read goroutine. It returns
// the control plane's key.
func stitchslopPage(ctx context.Context, l *Load, srv *Server, s Secrets) (*wsConn, string, error) {
	port := l.port(srv)
	key, token := s.Key, s.Token
	if srv.Kind == "hub" {
		token = randomToken()
		dir := srv.Dirs["stitchslop"]
		cmd := exec.CommandContext(ctx, srv.Bin, "stitchslop", "pair", "--port", strconv.Itoa(port), "--config-dir", dir)
		cmd.Env = append(srv.Env, "STITCHSLOP_TOKEN="+token)
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, "", fmt.Errorf("hub stitchslop pair: %v: %s", err, out)
		}
		raw, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("session-%d.json", port)))
		if err != nil {
			return nil, "", err
		}
		var sess struct{ Key string }
		if err := json.Unmarshal(raw, &sess); err != nil {
			return nil, "", err
		}
		key = sess.Key
	}
	p, err := dialWS("ws://127.0.0.1:"+strconv.Itoa(port)+"/", benchOrigin, nil)
	if err != nil {
		return nil, "", err
	}
	hs, _ := json.Marshal(map[string]string{"token": token})
	if srv.pairing != "" {
		// A reference's token is spent by the first tab, as the spec
		// says; later ones come back with the secret it minted.
		hs, _ = json.Marshal(map[string]string{"secret": srv.pairing})
	}
	if err := p.Send(string(hs)); err != nil {
		p.Close()
		return nil, "", err
	}
	hello, err := p.Next(10 * time.Second)
	if err != nil || !bytes.Contains(hello, []byte(`"hello"`)) {
		p.Close()
		return nil, "", fmt.Errorf("stitchslop handshake: %q %v", hello, err)
	}
	if srv.Kind != "hub" {
		var h struct{ PairingSecret string }
		if json.Unmarshal(hello, &h) == nil && h.PairingSecret != "" {
			srv.pairing = h.PairingSecret
		}
	}
	return p, key, nil
}

func stitchslopCall(s Secrets) *Load {
	l := &Load{Name: "stitchslop `POST /call`", Adapter: "stitchslop",
		Section: "origin: " + benchOrigin + "\nports: [0]\nconfig_dir: ~/.stitchslop\n",
		Node:    "stitchslop.js", Bare: true, Unit: "op"}
	l.Connect = func(ctx context.Context, srv *Server, callers int) (*Clients, error) {
		p, key, err := stitchslopServe(ctx, l, srv, s)
		if err != nil {
			return nil, err
		}
		hc := newHTTPClient(callers)
		url := l.base(srv) + "/call"
		body := []byte(`{"command":"scene.describe","args":{"limit":5}}`)
		op := func() (int64, error) {
			req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
			req.Header.Set("x-stitchslop-key", key)
			req.Header.Set("Content-Type", "application/json")
			got, err := fetch(hc, req)
			if err == nil && !bytes.Contains(got, []byte(`"ok":true`)) {
				err = fmt.Errorf("stitchslop /call answered %.200s", got)
			}
			return 1, err
		}
		c := &Clients{Close: func() { hc.CloseIdleConnections(); p.Close() }}
		for range callers {
			c.Ops = append(c.Ops, op)
		}
		return c, nil
	}
	return l
}

// stitchslopServe attaches the scripted tab, announces its tool and
// starts answering; it waits until the bridge lists the tool.
func stitchslopServe(ctx context.Context, l *Load, srv *Server, s Secrets) (*wsConn, string, error) {
	p, key, err := stitchslopPage(ctx, l, srv, s)
	if err != nil {
		return nil, "", err
	}
	if err := p.Send(`{"tools":[{"name":"scene.describe","description":"Describe the scene.","inputSchema":{"type":"object"}}]}`); err != nil {
		p.Close()
		return nil, "", err
	}
	p.Answer(pageAnswer)
	if srv.Kind == "hub" {
		hc := newHTTPClient(1)
		defer hc.CloseIdleConnections()
		for deadline := time.Now().Add(10 * time.Second); ; {
			req, _ := http.NewRequest("GET", l.base(srv)+"/tools", nil)
			req.Header.Set("x-stitchslop-key", key)
			got, err := fetch(hc, req)
			if err == nil && bytes.Contains(got, []byte("scene.describe")) {
				break
			}
			if time.Now().After(deadline) {
				p.Close()
				return nil, "", fmt.Errorf("stitchslop: the tab's tool never listed: %.200s %v", got, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return p, key, nil
}

// pageAnswer is the scripted tab: every command frame gets an immediate
// success under its id.
func pageAnswer(msg []byte) []byte {
	var f struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(msg, &f) != nil || len(f.ID) == 0 {
		return nil
	}
	out := make([]byte, 0, 80)
	out = append(out, `{"id":`...)
	out = append(out, f.ID...)
	return append(out, `,"ok":true,"say":"ok","objects":3}`...)
}
