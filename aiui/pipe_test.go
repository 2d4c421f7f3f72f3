package aiui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/hubdev/hub/hub"
)

// pipeListener hands out net.Pipe connections, so that a backend's HTTP
// server runs inside a synctest bubble (real sockets cannot) and its
// deadlines follow the bubble's clock. A pipe holds nothing: a write
// waits until the other end reads it, as a full socket would.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn, 16), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial queues a connection for Accept and returns the client's end.
func (l *pipeListener) dial() net.Conn {
	srv, cli := net.Pipe()
	l.conns <- srv
	return cli
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "127.0.0.1:80" }

// pipeBackend serves a backend's prompts stream (its outbox and
// controlPrompts, without the key gate) with hub.ServeHTTP over net.Pipe:
// the stop is the real one, the server's grace and the stream's drain,
// on the bubble's clock.
type pipeBackend struct {
	o      *Outbox
	ln     *pipeListener
	cancel context.CancelFunc
	served chan struct{} // closed when ServeHTTP returned, with err
	err    error
}

func servePipe(t *testing.T) *pipeBackend {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	o := newTestOutbox(t, 1000)
	b := &backend{log: log, outbox: o}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /control/prompts", b.controlPrompts)
	ctx, cancel := context.WithCancel(context.Background())
	p := &pipeBackend{o: o, ln: newPipeListener(), cancel: cancel, served: make(chan struct{})}
	go func() { defer close(p.served); p.err = hub.ServeHTTP(ctx, p.ln, mux, nil, log) }()
	t.Cleanup(func() { cancel(); <-p.served; o.Close() })
	return p
}

// stop begins the backend's stop; wait waits for it.
func (p *pipeBackend) stop() { p.cancel() }

// wait returns what ServeHTTP returned once the stop is over.
func (p *pipeBackend) wait() error {
	<-p.served
	return p.err
}

// pipeShell is `hub aiui prompts --follow` reading the stream.
type pipeShell struct {
	c net.Conn
	r *bufio.Reader
}

// follow opens the following stream; it returns once the backend has
// answered, so the shell is following.
func (p *pipeBackend) follow(t *testing.T) *pipeShell {
	t.Helper()
	c := p.ln.dial()
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "GET /control/prompts?follow=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("prompts --follow answered %s", resp.Status)
	}
	return &pipeShell{c: c, r: bufio.NewReader(resp.Body)}
}

// next reads the next prompt the stream prints (keepalive lines
// skipped); an error means the stream ended there (io.EOF: cleanly).
func (s *pipeShell) next() (Record, error) {
	for {
		line, err := s.r.ReadBytes('\n')
		if err != nil {
			return Record{}, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			return Record{}, fmt.Errorf("line %q: %w", line, err)
		}
		return r, nil
	}
}
