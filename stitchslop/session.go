package stitchslop

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hubdev/hub/hub"
)

// sessionFile is <config-dir>/session-<port>.json (§4.1): how a shell finds
// a running bridge and the key that authenticates it.
type sessionFile struct {
	Port      int       `json:"port"`
	Key       string    `json:"key"`
	Origin    string    `json:"origin"`
	PID       int       `json:"pid"`
	Protocol  int       `json:"protocol"`
	StartedAt time.Time `json:"startedAt"`
}

func sessionPath(dir string, port int) string {
	return filepath.Join(dir, fmt.Sprintf("session-%d.json", port))
}

// writeSession writes the file atomically with mode 0600.
func writeSession(dir string, s sessionFile) error {
	if err := hub.EnsurePrivateDir(dir); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return hub.WriteFileAtomic(sessionPath(dir, s.Port), append(b, '\n'), 0o600)
}

// removeSession deletes the file only while its pid is still ours: another
// bridge may have replaced it, and deleting that one would strand it.
func removeSession(dir string, port, pid int) {
	path := sessionPath(dir, port)
	s, err := readSession(path)
	if err != nil || s.PID != pid {
		return
	}
	os.Remove(path)
}

const maxSessionFile = 64 << 10

func readSession(path string) (sessionFile, error) {
	var s sessionFile
	b, err := hub.ReadPrivateFile(path, maxSessionFile) // it holds the control key
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s is not valid JSON: %v", filepath.Base(path), err)
	}
	if s.Port < 1 || s.Port > 65535 || s.PID <= 0 || s.Key == "" {
		return s, fmt.Errorf("%s lacks port, pid or key", filepath.Base(path))
	}
	// A bridge writes the port it bound into the file named for it: one
	// naming another port would send its key to whatever listens there.
	if base := filepath.Base(path); base != filepath.Base(sessionPath("", s.Port)) {
		return s, fmt.Errorf("%s names port %d, not the port in its name", base, s.Port)
	}
	return s, nil
}

// sessionScan is what a config dir says about running bridges.
type sessionScan struct {
	Live  []sessionFile
	Stale []sessionFile // pid gone
	Bad   []string      // unreadable files, with why
}

// scanSessions lists session-<port>.json files, live ones sorted by port.
func scanSessions(dir string) sessionScan {
	var out sessionScan
	matches, _ := filepath.Glob(filepath.Join(dir, "session-*.json"))
	for _, m := range matches {
		base := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), "session-"), ".json")
		if _, err := strconv.Atoi(base); err != nil {
			continue
		}
		s, err := readSession(m)
		if err != nil {
			out.Bad = append(out.Bad, err.Error())
			continue
		}
		if hub.PIDAlive(s.PID) {
			out.Live = append(out.Live, s)
		} else {
			out.Stale = append(out.Stale, s)
		}
	}
	sort.Slice(out.Live, func(i, j int) bool { return out.Live[i].Port < out.Live[j].Port })
	sort.Slice(out.Stale, func(i, j int) bool { return out.Stale[i].Port < out.Stale[j].Port })
	return out
}

// otherBridges lists the live bridges in dir other than ours (port, pid).
func otherBridges(dir string, port int) []map[string]any {
	var out []map[string]any
	for _, s := range scanSessions(dir).Live {
		if s.Port == port && s.PID == os.Getpid() {
			continue
		}
		out = append(out, map[string]any{"port": s.Port, "pid": s.PID, "origin": s.Origin})
	}
	return out
}

// sessionListener removes the session file as it closes, just before the
// port is released (§4.1: remove it only while it is still ours).
type sessionListener struct {
	net.Listener
	once   sync.Once
	remove func()
}

// Close removes the session file once, then closes the listener.
func (l *sessionListener) Close() error {
	l.once.Do(l.remove)
	return l.Listener.Close()
}
