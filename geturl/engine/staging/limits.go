package staging

import (
	"time"

	"github.com/hubdev/hub/internal/lazyre"
)

// The spec's limits (§6.3).
const (
	MaxChunkBytes   = 8 << 10
	MaxChunks       = 64
	MaxBlobBytes    = 160 << 10
	MaxBlobs        = 128
	MaxSessionBytes = 2 << 20
	TTL             = 30 * time.Minute
	// RecommendedChunkBytes is what acknowledgements suggest: about 1 KiB
	// fits URL tools that cap the whole URL near 2 KiB.
	RecommendedChunkBytes = 1 << 10
)

// PreviewBytes bounds the preview /b shows.
const PreviewBytes = 160

// NameRE is the grammar of blob names (the spec leaves it open), compiled
// on first use.
var NameRE = lazyre.New(`^[A-Za-z0-9._-]{1,64}$`)

// CheckName checks a blob name: "" when it is one, else what is wrong (a
// parameter check of the /s and /b routes).
func CheckName(v string) string {
	if !NameRE().MatchString(v) {
		return "must be 1-64 letters, digits, '.', '_' or '-'"
	}
	return ""
}
