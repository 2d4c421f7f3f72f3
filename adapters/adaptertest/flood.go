package adaptertest

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// FloodResult is what PreAuthFlood measured.
type FloodResult struct {
	// Upgraded sockets sent their frame header; Refused upgrades were
	// answered with something other than 101 (a cap on unauthenticated
	// sockets); Closed is how many upgraded sockets the server ended.
	Upgraded, Refused, Closed int
	// HeapGrowth is the growth of the live heap (HeapInuse, after a GC)
	// with the flood's sockets still open.
	HeapGrowth int64
	// Allocated is every byte allocated while the flood ran, freed or not
	// (TotalAlloc), so a buffer allocated and dropped again still counts.
	Allocated uint64
}

// floodCutoff ends the wait early once the heap has plainly grown: the
// verdict is already clear, and the test should not drive a machine into
// swap to find out how bad it gets.
const floodCutoff = 256 << 20

// PreAuthFlood is the pre-authentication probe: n sockets
// upgrade wsURL ("ws://127.0.0.1:port/path", with o's Origin and headers)
// and each sends nothing but the header of one masked frame declaring size
// bytes, no credential, no hello. It waits until the server has dealt with
// them (closed every one, or the heap grew by floodCutoff, or WaitTimeout
// passed), measures the heap with them still open, then closes them. It
// measures deltas, so other live data in the test process does not count.
func PreAuthFlood(t testing.TB, wsURL string, o DialOptions, n int, size uint64) FloodResult {
	t.Helper()
	u, err := url.Parse(wsURL)
	if err != nil {
		t.Fatal(err)
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	var (
		mu       sync.Mutex
		conns    []net.Conn
		res      FloodResult
		closed   atomic.Int32
		sent     sync.WaitGroup
		readers  sync.WaitGroup
		firstErr error
	)
	for range n {
		sent.Add(1)
		go func() {
			defer sent.Done()
			c, status, err := rawUpgrade(u, o)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				if firstErr == nil {
					firstErr = err
				}
				return
			case status != http.StatusSwitchingProtocols:
				res.Refused++
				c.Close()
				return
			}
			hdr := []byte{0x82, 0x80 | 127} // binary, final, masked, 64-bit length
			hdr = binary.BigEndian.AppendUint64(hdr, size)
			hdr = append(hdr, 1, 2, 3, 4) // the mask key; no payload follows
			if _, err := c.Write(hdr); err != nil {
				if firstErr == nil {
					firstErr = err
				}
				c.Close()
				return
			}
			conns = append(conns, c)
			res.Upgraded++
			readers.Add(1)
			go func() { // the server's answer is a close (or nothing)
				defer readers.Done()
				io.Copy(io.Discard, c)
				closed.Add(1)
			}()
		}()
	}
	sent.Wait()
	if firstErr != nil {
		t.Errorf("flood: %v", firstErr)
	}
	var ms runtime.MemStats
	for deadline := time.Now().Add(WaitTimeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if int(closed.Load()) == res.Upgraded {
			break
		}
		runtime.ReadMemStats(&ms)
		if int64(ms.HeapInuse)-int64(before.HeapInuse) > floodCutoff {
			break
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	res.HeapGrowth = int64(ms.HeapInuse) - int64(before.HeapInuse)
	res.Allocated = ms.TotalAlloc - before.TotalAlloc
	res.Closed = int(closed.Load())
	for _, c := range conns {
		c.Close()
	}
	readers.Wait()
	t.Logf("pre-auth flood of %d sockets declaring %d bytes: %d upgraded, %d refused, %d closed by the server; heap +%.1f MiB, allocated %.1f MiB",
		n, size, res.Upgraded, res.Refused, res.Closed, float64(res.HeapGrowth)/(1<<20), float64(res.Allocated)/(1<<20))
	return res
}

// rawUpgrade performs a WebSocket upgrade by hand and returns the
// connection with the response's status.
func rawUpgrade(u *url.URL, o DialOptions) (net.Conn, int, error) {
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		return nil, 0, err
	}
	key := make([]byte, 16)
	rand.Read(key)
	req := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: u.Path}, Host: u.Host,
		Header: o.header(), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	if h := req.Header.Get("Host"); h != "" {
		req.Host = h
		req.Header.Del("Host")
	}
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", base64.StdEncoding.EncodeToString(key))
	c.SetDeadline(time.Now().Add(WaitTimeout))
	if err := req.Write(c); err != nil {
		c.Close()
		return nil, 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil {
		c.Close()
		return nil, 0, err
	}
	c.SetDeadline(time.Time{})
	return c, resp.StatusCode, nil
}

// FloodBudget is what 150 unauthenticated sockets may cost a bridge in heap
// growth and in allocation: a few MiB in all, where each declared frame,
// read in full, would cost its size.
const FloodBudget = 64 << 20

// PreAuthFloodCostsLittle runs PreAuthFlood with 150 sockets declaring size
// bytes each and fails the test unless sockets upgraded, the flood cost
// less than FloodBudget, and every oversized frame was refused.
func PreAuthFloodCostsLittle(t testing.TB, wsURL string, o DialOptions, size uint64) {
	t.Helper()
	r := PreAuthFlood(t, wsURL, o, 150, size)
	if r.Upgraded == 0 {
		t.Fatalf("%s: no socket upgraded", wsURL)
	}
	if r.HeapGrowth > FloodBudget || r.Allocated > FloodBudget {
		t.Errorf("%s: 150 unauthenticated sockets cost heap +%d MiB, %d MiB allocated (budget %d MiB)",
			wsURL, r.HeapGrowth>>20, r.Allocated>>20, FloodBudget>>20)
	}
	if r.Closed != r.Upgraded {
		t.Errorf("%s: %d of %d oversized frames sent before authenticating were not refused", wsURL, r.Upgraded-r.Closed, r.Upgraded)
	}
}
