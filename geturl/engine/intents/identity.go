package intents

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"regexp"
)

// IDHexLen is the number of hex digits in an automatic call id
// (auto:<tool>:<hex>). The spec's example has 12; 16 (64 bits) keeps
// collisions out of reach for the few hundred intents a journal holds,
// and the journal compares the full digest anyway.
const IDHexLen = 16

// Digest is the SHA-256 of an intent's canonical identity.
type Digest [sha256.Size]byte

// NonceRE is the grammar of run= nonces and call= ids (spec §5.3).
var NonceRE = regexp.MustCompile(`^[A-Za-z0-9._:-]+$`)

// Identity computes an intent's digest: the canonical JSON of
// {"args":args,"run":run,"tool":tool} ("run" left out when empty).
func Identity(tool string, args any, run string) (Digest, error) {
	v := map[string]any{"tool": tool, "args": args}
	if run != "" {
		v["run"] = run
	}
	c, err := Canonical(v)
	if err != nil {
		return Digest{}, err
	}
	return sha256.Sum256(c), nil
}

// autoPrefix starts every automatic call id.
const autoPrefix = "auto:"

// AutoID is the deterministic call id of an intent with digest d.
func AutoID(tool string, d Digest) string {
	return autoPrefix + tool + ":" + hex.EncodeToString(d[:IDHexLen/2])
}

// DeriveRun makes a server-chosen run= nonce for a recovery URL (a retry
// after a failure, a repeat after the project changed), spelled
// "<purpose>.<12 hex>" so the agent can tell it apart. It is derived,
// not random, from the call id, the purpose and a counter (the project
// version for a repeat), so the same answer always offers the same URL and
// fetching it twice still runs once.
func DeriveRun(callID, purpose string, n uint64) string {
	h := sha256.New()
	h.Write([]byte(callID))
	h.Write([]byte{0})
	h.Write([]byte(purpose))
	var nb [8]byte
	binary.BigEndian.PutUint64(nb[:], n)
	h.Write(nb[:])
	sum := h.Sum(nil)
	prefix := purpose
	if prefix == "" || !NonceRE.MatchString(prefix) || len(prefix) > 16 {
		prefix = "r"
	}
	return prefix + "." + hex.EncodeToString(sum[:6])
}
