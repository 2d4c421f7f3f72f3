package stitchslop

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/hubdev/hub/hub"
)

// pairingFileName and pairingLockName live in the config dir (§2.4).
const (
	pairingFileName = "pairing.json"
	pairingLockName = "pairing.lock"
	// maxSecretsPerOrigin keeps one pairing per browser profile that paired,
	// newest first; older ones fall off.
	maxSecretsPerOrigin = 8
	// maxSpentTokens bounds the spent-token memory; the oldest drop first.
	maxSpentTokens = 1024
	// maxPairingFile bounds what we are willing to parse.
	maxPairingFile = 4 << 20
)

// pairingFile is the on-disk form of pairing.json. Secrets and spent tokens
// are stored only as SHA-256 hashes: the bridge never needs them back, and a
// copied file then authenticates nobody.
type pairingFile struct {
	Version int                       `json:"version"`
	Origins map[string]*originPairing `json:"origins"`
	// SpentTokens are hashes of redeemed one-time tokens, oldest first.
	SpentTokens []string `json:"spentTokens"`
}

type originPairing struct {
	Secrets []storedSecret `json:"secrets"`
}

type storedSecret struct {
	Hash     string    `json:"sha256"`
	PairedAt time.Time `json:"pairedAt"`
}

// pairingStore reads and updates pairing.json. Updates re-read the file
// under an exclusive flock on pairing.lock and replace it atomically, so two
// bridges sharing one config dir never lose each other's pairings or tear
// the file.
type pairingStore struct {
	dir string
}

func (p *pairingStore) path() string { return filepath.Join(p.dir, pairingFileName) }

// load reads the file. A missing file is empty; a corrupt one is reported as
// errCorrupt alongside an empty value so callers can decide.
func (p *pairingStore) load() (*pairingFile, error) {
	pf := &pairingFile{Version: 1, Origins: map[string]*originPairing{}}
	f, err := hub.OpenPrivate(p.path(), os.O_RDONLY, 0, true)
	if errors.Is(err, fs.ErrNotExist) {
		return pf, nil
	}
	if err != nil {
		return pf, err
	}
	defer f.Close()
	// Read what the file holds (bounded), not a cap-sized buffer: this runs
	// on every handshake and every status.
	b, err := io.ReadAll(io.LimitReader(f, maxPairingFile+1))
	if err != nil {
		return pf, err
	}
	if len(b) > maxPairingFile {
		return pf, fmt.Errorf("%w: larger than %d bytes", errCorrupt, maxPairingFile)
	}
	var got pairingFile
	if err := json.Unmarshal(b, &got); err != nil {
		return pf, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	if got.Origins == nil {
		got.Origins = map[string]*originPairing{}
	}
	for k, v := range got.Origins {
		if v == nil {
			delete(got.Origins, k)
		}
	}
	got.Version = 1
	return &got, nil
}

var errCorrupt = errors.New("pairing.json is corrupt")

// unreadableFate says what becomes of a pairing.json that load refused:
// a corrupt one is moved aside by the next pairing (update), but one
// refused as unsafe (a link, another owner, writable by others) is left
// alone, and every pairing fails until the user removes it.
func unreadableFate(err error) string {
	if errors.Is(err, errCorrupt) {
		return "it is moved aside on the next pairing"
	}
	return "no pairing can be stored until it is removed"
}

// tightenMode makes an existing pairing.json 0600 (§2.4): one left by hand
// or by an older bridge may be readable by others, and our own writes only
// fix it at the next pairing.
func (p *pairingStore) tightenMode() error {
	// Through our own descriptor of a file that is ours and not a link:
	// a chmod by path would follow a planted link.
	f, err := hub.OpenPrivate(p.path(), os.O_RDONLY, 0, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Mode().Perm() == 0o600 {
		return err
	}
	return f.Chmod(0o600)
}

// Paired reports whether origin has at least one stored pairing.
func (p *pairingStore) Paired(origin string) bool {
	pf, _ := p.load()
	op := pf.Origins[origin]
	return op != nil && len(op.Secrets) > 0
}

// PairedOrigins lists the origins with at least one stored pairing.
func (p *pairingStore) PairedOrigins() []string {
	pf, _ := p.load()
	out := make([]string, 0, len(pf.Origins))
	for o, op := range pf.Origins {
		if len(op.Secrets) > 0 {
			out = append(out, o)
		}
	}
	sort.Strings(out)
	return out
}

// Verify reports whether secret is a stored pairing for origin. Every stored
// hash is compared in constant time.
func (p *pairingStore) Verify(origin, secret string) bool {
	if secret == "" {
		return false
	}
	pf, _ := p.load()
	op := pf.Origins[origin]
	if op == nil {
		return false
	}
	h := hub.HashSecret(secret)
	ok := false
	for _, s := range op.Secrets {
		if hub.SecretEqual(h, s.Hash) {
			ok = true
		}
	}
	return ok
}

// Spent reports whether token was already redeemed.
func (p *pairingStore) Spent(token string) bool {
	if token == "" {
		return false
	}
	pf, _ := p.load()
	h := hub.HashSecret(token)
	spent := false
	for _, s := range pf.SpentTokens {
		if hub.SecretEqual(h, s) {
			spent = true
		}
	}
	return spent
}

// Redeem spends token and stores secret as a new pairing for origin, in one
// locked read-modify-write. It fails with errTokenSpent when another bridge
// redeemed the same token first.
func (p *pairingStore) Redeem(origin, token, secret string) error {
	return p.update(func(pf *pairingFile) error {
		th := hub.HashSecret(token)
		for _, s := range pf.SpentTokens {
			if hub.SecretEqual(th, s) {
				return errTokenSpent
			}
		}
		pf.SpentTokens = append(pf.SpentTokens, th)
		if n := len(pf.SpentTokens); n > maxSpentTokens {
			pf.SpentTokens = pf.SpentTokens[n-maxSpentTokens:]
		}
		op := pf.Origins[origin]
		if op == nil {
			op = &originPairing{}
			pf.Origins[origin] = op
		}
		op.Secrets = append([]storedSecret{{Hash: hub.HashSecret(secret), PairedAt: time.Now().UTC()}}, op.Secrets...)
		if len(op.Secrets) > maxSecretsPerOrigin {
			op.Secrets = op.Secrets[:maxSecretsPerOrigin]
		}
		return nil
	})
}

var errTokenSpent = errors.New("token already redeemed")

// update applies fn to the current file under the lock and writes the result
// atomically (0600 file, 0700 dir). A corrupt file is moved aside, never
// silently merged or overwritten in place.
func (p *pairingStore) update(fn func(*pairingFile) error) error {
	if err := hub.EnsurePrivateDir(p.dir); err != nil {
		return err
	}
	unlock, err := lockFile(filepath.Join(p.dir, pairingLockName), true)
	if err != nil {
		return err
	}
	defer unlock()
	pf, err := p.load()
	if errors.Is(err, errCorrupt) {
		aside := fmt.Sprintf("%s.corrupt-%d", p.path(), time.Now().UnixNano())
		if rerr := os.Rename(p.path(), aside); rerr != nil {
			return fmt.Errorf("%v; cannot move it aside: %v", err, rerr)
		}
	} else if err != nil {
		return err
	}
	if err := fn(pf); err != nil {
		return err
	}
	b, err := json.MarshalIndent(pf, "", "  ")
	if err != nil {
		return err
	}
	return hub.WriteFileAtomic(p.path(), append(b, '\n'), 0o600)
}

// lockFile takes an exclusive lock on path (created 0600) and returns its
// release; with wait false it fails at once with hub.ErrLocked when
// another process holds it. The lock dies with the process, so a crashed
// bridge never wedges the next one.
func lockFile(path string, wait bool) (func(), error) {
	f, err := hub.OpenPrivate(path, os.O_RDWR|os.O_CREATE, 0o600, false)
	if err != nil {
		return nil, err
	}
	if err := hub.LockFile(f, true, wait); err != nil {
		f.Close()
		if err == hub.ErrLocked {
			return nil, err
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() {
		hub.UnlockFile(f)
		f.Close()
	}, nil
}
