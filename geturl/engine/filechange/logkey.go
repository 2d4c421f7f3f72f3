package filechange

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/hubdev/hub/hub"
)

// LogKey authenticates the crash logs of multi-file patches (see txnLog).
// A log is a file in the project, and a cloned repository can ship one
// with "backups" beside it: followed, it would rename the repository's
// files over the user's own (an untracked .env, say). Recovery follows
// only a log this key signed. Share one per process; geturl loads its key
// from its private state directory, so a log outlives the process that
// wrote it. The zero value signs with a key made for this process: its
// logs are recovered only by it.
type LogKey struct {
	mu  sync.Mutex
	key []byte
}

// logKeyBytes is the size of a key, and of a key file.
const logKeyBytes = 32

// processLogKey serves engines built without a LogKey.
var processLogKey LogKey

// Set makes key the one logs are signed and checked with.
func (k *LogKey) Set(key []byte) {
	k.mu.Lock()
	k.key = append([]byte(nil), key...)
	k.mu.Unlock()
}

func (k *LogKey) bytes() []byte {
	if k == nil {
		k = &processLogKey
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.key == nil {
		k.key = hub.RandomBytes(logKeyBytes)
	}
	return k.key
}

// sign is the MAC of a log's steps as written.
func (k *LogKey) sign(steps []byte) string {
	m := hmac.New(sha256.New, k.bytes())
	m.Write([]byte("geturl crash log\x00"))
	m.Write(steps)
	return hex.EncodeToString(m.Sum(nil))
}

// verify reports whether mac is this key's MAC of steps (constant time).
func (k *LogKey) verify(steps []byte, mac string) bool {
	return hmac.Equal([]byte(k.sign(steps)), []byte(mac))
}

// LoadLogKey reads the key file at path (a private file: the user's own,
// 0600, not a link), creating it with a fresh key when there is none. Its
// directory must already be private.
func LoadLogKey(path string) ([]byte, error) {
	b, err := hub.ReadPrivateFile(path, logKeyBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		b = hub.RandomBytes(logKeyBytes)
		if err := hub.WriteFileAtomic(path, b, 0o600); err != nil {
			return nil, err
		}
		return b, nil
	case err != nil:
		return nil, err
	case len(b) != logKeyBytes:
		return nil, fmt.Errorf("%s is not a crash-log key (%d bytes, not %d); remove it and start again", path, len(b), logKeyBytes)
	}
	return b, nil
}
