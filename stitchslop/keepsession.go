package stitchslop

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/hubdev/hub/hub"
)

// sessionCheck is how often a running bridge checks its session file.
var sessionCheck = 2 * time.Second

// sessionKeeper keeps a running bridge's session file (§4.1) in place: a
// file deleted or damaged while the bridge runs made every shell command
// and face report "no bridge is running" and point at starting one. While
// the bridge holds its port no other bridge can write a file of that
// name, so rewriting it takes nothing from anyone. It stops writing once
// the file is removed on the way out.
type sessionKeeper struct {
	dir  string
	sess sessionFile

	mu     sync.Mutex
	closed bool
}

// keep checks the file on files (or, when files is nil, every interval)
// until ctx ends.
func (k *sessionKeeper) keep(ctx context.Context, files *hub.FileKeeper, every time.Duration, log *slog.Logger) {
	path := sessionPath(k.dir, k.sess.Port)
	put := func() error {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.closed {
			return nil
		}
		return writeSession(k.dir, k.sess)
	}
	hub.KeepFiles(ctx, files, every, log, hub.KeptFile{Name: "the session file", Path: path, Check: func() (string, func() error) {
		got, err := readSession(path)
		switch {
		case err != nil:
			return err.Error(), put
		case got.PID != k.sess.PID || !hub.SecretEqual(got.Key, k.sess.Key):
			return "it names another bridge", put
		}
		return "", nil
	}})
}

// remove deletes the file while it is still this bridge's, and keeps it
// from being written again.
func (k *sessionKeeper) remove() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	removeSession(k.dir, k.sess.Port, k.sess.PID)
}
