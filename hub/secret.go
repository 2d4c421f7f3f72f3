package hub

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// SecretStore keeps credentials as 0600 files under one 0700 directory.
type SecretStore struct {
	Dir string
}

// EnsureDir creates the store directory with mode 0700 and tightens an
// existing one, so a secret never lands in a directory others can list.
func (s *SecretStore) EnsureDir() error {
	return EnsurePrivateDir(s.Dir)
}

// Path is the full path of a named secret file.
func (s *SecretStore) Path(name string) string { return filepath.Join(s.Dir, name) }

// Write atomically replaces the named file with data (mode 0600).
func (s *SecretStore) Write(name string, data []byte) error {
	if err := s.EnsureDir(); err != nil {
		return err
	}
	return WriteFileAtomic(s.Path(name), data, 0o600)
}

// maxSecretFile bounds what Read is willing to load.
const maxSecretFile = 1 << 20

// Read returns the named file's contents; a file that is not private (a
// link, another owner, readable by others) is refused (ReadPrivateFile).
func (s *SecretStore) Read(name string) ([]byte, error) {
	return ReadPrivateFile(s.Path(name), maxSecretFile)
}

// WriteFileAtomic writes data to path so that readers see either the old or
// the new contents, never a torn file: temp file in the same directory →
// chmod → write → fsync → rename → fsync the directory.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	sweepStaleTemps(dir, filepath.Base(path))
	return nil
}

// staleTempAge is how old a temp file of an atomic write must be to count
// as one a killed writer left (a write takes milliseconds).
const staleTempAge = 10 * time.Minute

// sweepStaleTemps removes the temp files writers of base killed mid-write
// (kill -9, power loss) left beside it: 0600 copies of secrets nothing
// would ever remove. A fresh one may be another writer's, and stays.
func sweepStaleTemps(dir, base string) {
	stale, _ := filepath.Glob(filepath.Join(dir, "."+escapeGlob(base)+".tmp-*"))
	for _, p := range stale {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > staleTempAge {
			os.Remove(p)
		}
	}
}

// escapeGlob quotes the pattern characters of a file name.
func escapeGlob(name string) string {
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// RandomBytes returns n bytes from crypto/rand.
func RandomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never happens on Linux
	}
	return b
}

// RandomToken returns n random bytes encoded as unpadded base64url.
func RandomToken(n int) string {
	return base64.RawURLEncoding.EncodeToString(RandomBytes(n))
}

// RandomHex returns n random bytes as upper-case hex.
func RandomHex(n int) string {
	return fmt.Sprintf("%X", RandomBytes(n))
}

// HashSecret returns the hex SHA-256 of a secret: the only form in which a
// spent one-time token is remembered.
func HashSecret(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// SecretEqual compares two secrets in constant time. Both sides are hashed to
// a fixed width first, so values of different lengths neither panic nor leak
// their length through timing. An empty secret never matches.
func SecretEqual(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	ha := sha256.Sum256([]byte(a))
	hb := sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}
