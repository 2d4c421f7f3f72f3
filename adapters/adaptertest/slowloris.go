package adaptertest

import (
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Slowloris is the connection flood of issue 7: n connections to one
// listener, each sending the start of a request header and then one more
// header byte every interval, never finishing it. A connection the server
// closes is replaced after one interval, as the attack did. It runs until
// Stop (the test's cleanup calls it).
type Slowloris struct {
	addr  string
	every time.Duration
	stop  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup

	dialed, cut, open atomic.Int64
}

// StartSlowloris starts n slow connections to addr (host:port), one byte
// every interval each.
func StartSlowloris(t testing.TB, addr string, n int, every time.Duration) *Slowloris {
	s := &Slowloris{addr: addr, every: every, stop: make(chan struct{})}
	for range n {
		s.wg.Add(1)
		go s.run()
	}
	if t != nil {
		t.Cleanup(s.Stop)
	}
	return s
}

// Dialed is how many connections were made; Cut how many of them the
// server closed; Open how many are connected now (accepted by the server
// or still in its kernel queue).
func (s *Slowloris) Dialed() int { return int(s.dialed.Load()) }
func (s *Slowloris) Cut() int    { return int(s.cut.Load()) }
func (s *Slowloris) Open() int   { return int(s.open.Load()) }

// Stop closes every connection and waits for the flood to end.
func (s *Slowloris) Stop() {
	s.once.Do(func() { close(s.stop) })
	s.wg.Wait()
}

func (s *Slowloris) pause() bool {
	t := time.NewTimer(s.every)
	defer t.Stop()
	select {
	case <-s.stop:
		return false
	case <-t.C:
		return true
	}
}

func (s *Slowloris) run() {
	defer s.wg.Done()
	for {
		select {
		case <-s.stop:
			return
		default:
		}
		c, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err != nil {
			if !s.pause() {
				return
			}
			continue
		}
		s.dialed.Add(1)
		s.open.Add(1)
		cut := s.trickle(c)
		s.open.Add(-1)
		if !cut {
			return // stopped
		}
		s.cut.Add(1)
		if !s.pause() {
			return
		}
	}
}

// trickle holds c open, sending a header byte every interval, until the
// server closes it (true) or the flood stops (false).
func (s *Slowloris) trickle(c net.Conn) bool {
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		io.Copy(io.Discard, c) // the server's close (or a 408) ends it
	}()
	defer func() { c.Close(); <-gone }()
	if _, err := fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nX-Slow: ", s.addr); err != nil {
		return true
	}
	tick := time.NewTicker(s.every)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return false
		case <-gone:
			return true
		case <-tick.C:
			if _, err := c.Write([]byte{'a'}); err != nil {
				return true
			}
		}
	}
}
