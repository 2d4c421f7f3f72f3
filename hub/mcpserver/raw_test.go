package mcpserver

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// rawClient speaks newline-delimited JSON-RPC to Server.Serve over pipes,
// to check the exact bytes an SDK client would normalise away.
type rawClient struct {
	t     testing.TB
	in    *io.PipeWriter
	lines chan string
	done  chan served
}

type served struct {
	announced bool
	err       error
}

// recvLimit only keeps a broken test from hanging; nothing is timed.
const recvLimit = 10 * time.Second

func serveRaw(t testing.TB, s *Server) *rawClient {
	t.Helper()
	return serveRawMax(t, s, 1<<10)
}

// serveRawMax is serveRaw with a line limit of maxLine.
func serveRawMax(t testing.TB, s *Server, maxLine int) *rawClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &rawClient{t: t, in: inW, lines: make(chan string, 64), done: make(chan served, 1)}
	go func() {
		a, err := s.Serve(context.Background(), &LineTransport{In: inR, Out: outW, MaxLine: maxLine})
		outW.Close()
		c.done <- served{a, err}
	}()
	go func() {
		br := bufio.NewReader(outR)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				close(c.lines)
				return
			}
			c.lines <- strings.TrimSuffix(line, "\n")
		}
	}()
	t.Cleanup(func() { c.close() })
	return c
}

func (c *rawClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawClient) recv() string {
	c.t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			c.t.Fatal("the server closed its output")
		}
		return l
	case <-time.After(recvLimit):
		c.t.Fatal("no JSON-RPC line")
		return ""
	}
}

// untilPing returns every line that arrives before the answer to a ping
// sent now: what was due before the ping has been written by then, so an
// empty result proves nothing was, with no waiting on the clock.
func (c *rawClient) untilPing() []string {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":"sync","method":"ping"}`)
	var got []string
	for {
		l := c.recv()
		if l == `{"jsonrpc":"2.0","id":"sync","result":{}}` {
			return got
		}
		got = append(got, l)
	}
}

func (c *rawClient) initialize(version string) string {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	return c.recv()
}

// close ends the input (the client went away) and returns what Serve did.
func (c *rawClient) close() served {
	c.in.Close()
	r, ok := <-c.done
	if ok {
		close(c.done)
	}
	return r
}
