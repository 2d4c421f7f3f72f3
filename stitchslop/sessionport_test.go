package stitchslop

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/hub"
)

// A session file names its port twice, in its name and its content
// (§4.1). One whose content names another port is refused: opening the
// bridge of its name's port must never send the key it holds to a
// process listening on the other port.
func TestSessionFileNamingAnotherPortRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		b := make([]byte, 4096)
		n, _ := c.Read(b)
		got <- string(b[:n])
	}()
	foreign := ln.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	os.Chmod(dir, 0o700)
	b, _ := json.Marshal(sessionFile{Port: foreign, Key: "secret-key", PID: os.Getpid(), Origin: "https://x.test"})
	if err := hub.WriteFileAtomic(sessionPath(dir, 4000), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRemote(context.Background(), dir, 4000); err == nil {
		t.Fatal("opened a session file naming another port")
	}
	select {
	case req := <-got:
		if strings.Contains(req, "secret-key") {
			t.Fatalf("the key went to port %d:\n%s", foreign, req)
		}
	case <-time.After(200 * time.Millisecond):
	}
	if scan := scanSessions(dir); len(scan.Live) != 0 || len(scan.Bad) != 1 {
		t.Fatalf("scan: %+v", scan)
	}
}
