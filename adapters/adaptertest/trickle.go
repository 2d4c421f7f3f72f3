package adaptertest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TrickleResult is what a server did with a trickled body.
type TrickleResult struct {
	// Sent is how many body bytes were written before the end.
	Sent int
	// Status is the response's status (0 when none came).
	Status int
	// Cut reports that the server gave up on the body — it answered and
	// closed the connection — before the whole body was sent.
	Cut bool
}

// Trickle sends one request to addr whose body of n bytes arrives one byte
// every interval, as a slow or hostile client would, and reports what the
// server did. It returns when the body is complete and answered, or when
// the server closes the connection. The body is JSON whitespace.
func Trickle(t testing.TB, addr, method, path string, header http.Header, n int, every time.Duration) TrickleResult {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("trickle: %v", err)
	}
	defer conn.Close()
	var head strings.Builder
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", method, path, addr, n)
	for k, vs := range header {
		for _, v := range vs {
			fmt.Fprintf(&head, "%s: %s\r\n", k, v)
		}
	}
	head.WriteString("\r\n")
	if _, err := io.WriteString(conn, head.String()); err != nil {
		t.Fatalf("trickle: %v", err)
	}
	// The reader records the answer and then waits for the server to close.
	status := make(chan int, 1)
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			status <- 0
			return
		}
		status <- resp.StatusCode
		io.Copy(io.Discard, resp.Body)
		io.Copy(io.Discard, br) // until the server closes the connection
	}()
	var res TrickleResult
	tick := time.NewTicker(every)
	defer tick.Stop()
	for res.Sent < n {
		select {
		case <-closed:
			res.Status, res.Cut = <-status, true
			return res
		case <-tick.C:
		}
		if _, err := conn.Write([]byte{' '}); err != nil {
			<-closed
			res.Status, res.Cut = <-status, true
			return res
		}
		res.Sent++
	}
	// The whole body went out: the server kept the connection for all of it.
	select {
	case res.Status = <-status:
	case <-time.After(WaitTimeout):
	}
	return res
}
