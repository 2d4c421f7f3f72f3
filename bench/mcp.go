package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// mcpStdio is an MCP client of a stdio server process (`hub mcp`),
// matching answers to callers by id.
type mcpStdio struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	wmu     sync.Mutex
	mu      sync.Mutex
	waiting map[int64]chan []byte
	ids     atomic.Int64
	done    chan struct{}
	stderr  *tailBuffer
}

func startMCP(ctx context.Context, env []string, dir, bin string, args ...string) (*mcpStdio, error) {
	m := &mcpStdio{waiting: map[int64]chan []byte{}, done: make(chan struct{}), stderr: &tailBuffer{}}
	m.cmd = exec.Command(bin, args...)
	m.cmd.Env, m.cmd.Dir, m.cmd.Stderr = env, dir, m.stderr
	var err error
	if m.in, err = m.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := m.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := m.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		defer close(m.done)
		r := bufio.NewReaderSize(out, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			var f struct {
				ID *int64 `json:"id"`
			}
			if json.Unmarshal(line, &f) != nil || f.ID == nil {
				continue
			}
			m.mu.Lock()
			ch := m.waiting[*f.ID]
			delete(m.waiting, *f.ID)
			m.mu.Unlock()
			if ch != nil {
				ch <- line
			}
		}
	}()
	if _, err := m.call(ctx, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`); err != nil {
		m.Close()
		return nil, fmt.Errorf("hub mcp initialize: %w (%s)", err, m.stderr)
	}
	if err := m.write(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

func (m *mcpStdio) write(s string) error {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	_, err := io.WriteString(m.in, s)
	return err
}

// call sends one request and returns its answer line.
func (m *mcpStdio) call(ctx context.Context, method, params string) ([]byte, error) {
	id := m.ids.Add(1)
	ch := make(chan []byte, 1)
	m.mu.Lock()
	m.waiting[id] = ch
	m.mu.Unlock()
	if err := m.write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)); err != nil {
		return nil, err
	}
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	select {
	case line := <-ch:
		return line, nil
	case <-m.done:
		return nil, fmt.Errorf("hub mcp exited: %s", m.stderr)
	case <-t.C:
		return nil, fmt.Errorf("hub mcp: no answer to %s in 30s", method)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Usage is the face process's.
func (m *mcpStdio) Usage() (Usage, error) { return ReadUsage(m.cmd.Process.Pid) }

// Close ends the session (stdin closed) and waits for the process.
func (m *mcpStdio) Close() {
	m.in.Close()
	select {
	case <-m.done:
	case <-time.After(5 * time.Second):
		m.cmd.Process.Kill()
	}
	m.cmd.Wait()
}

// hubMCPCall is an agent's tools/call through `hub mcp` (the stdio face
// the README tells users to register) to the scripted Stitch Slop tab's
// tool and back; the server's CPU is the hub daemon's, the face's is
// reported beside it.
func hubMCPCall(s Secrets) *Load {
	l := &Load{Name: "`hub mcp` tools/call → stitchslop tab", Adapter: "stitchslop",
		Section: stitchslopCall(s).Section, Unit: "op"}
	l.Connect = func(ctx context.Context, srv *Server, callers int) (*Clients, error) {
		p, _, err := stitchslopServe(ctx, l, srv, s)
		if err != nil {
			return nil, err
		}
		m, err := startMCP(ctx, srv.Env, srv.Home, srv.Bin, "mcp", "--config", filepath.Join(srv.Home, "hub.yaml"), "--log-level", "warn")
		if err != nil {
			p.Close()
			return nil, err
		}
		closeAll := func() { m.Close(); p.Close() }
		var tool string
		for deadline := time.Now().Add(10 * time.Second); tool == ""; {
			list, err := m.call(ctx, "tools/list", `{}`)
			if err != nil {
				closeAll()
				return nil, err
			}
			var v struct {
				Result struct{ Tools []struct{ Name string } }
			}
			json.Unmarshal(list, &v)
			for _, t := range v.Result.Tools {
				if strings.Contains(t.Name, "scene") {
					tool = t.Name
				}
			}
			if tool == "" && time.Now().After(deadline) {
				closeAll()
				return nil, fmt.Errorf("hub mcp never listed the tab's tool: %.500s", list)
			}
			time.Sleep(20 * time.Millisecond)
		}
		params := fmt.Sprintf(`{"name":%q,"arguments":{"limit":5}}`, tool)
		c := &Clients{Face: m, Close: closeAll}
		for range callers {
			c.Ops = append(c.Ops, func() (int64, error) {
				got, err := m.call(ctx, "tools/call", params)
				if err == nil && (!bytes.Contains(got, []byte(`"result"`)) || bytes.Contains(got, []byte(`"isError":true`))) {
					err = fmt.Errorf("hub mcp tools/call: %.300s", got)
				}
				return 1, err
			})
		}
		return c, nil
	}
	return l
}
