package filechange

import "github.com/hubdev/hub/geturl/engine/files"

// Limits bound what one mutation may read, parse and write. The zero value
// of a field means its default. They are independent of the transport's
// own caps (an 8 KiB raw tail, 160 KiB staged blobs), so the engine stays
// bounded whoever calls it.
type Limits struct {
	// MaxFileBytes is the largest file Edit and ApplyPatch will read and
	// Write will overwrite, and the largest content any of them writes.
	// It equals the /r scan limit, so every fingerprint the engine reports
	// is a content fingerprint the agent can compare with a read.
	MaxFileBytes int64
	// MaxPatchBytes, MaxPatchLines, MaxPatchFiles and MaxPatchHunks bound
	// the patch parser: bytes and lines of patch text, file sections, and
	// hunks over all sections.
	MaxPatchBytes int
	MaxPatchLines int
	MaxPatchFiles int
	MaxPatchHunks int
	// MaxMatchWork bounds the line comparisons one patch may spend finding
	// its hunks, so a pathological patch against a large file fails fast
	// instead of burning CPU.
	MaxMatchWork int64
}

// DefaultLimits are the engine's bounds.
var DefaultLimits = Limits{
	MaxFileBytes:  files.DefaultLimits.MaxScanBytes,
	MaxPatchBytes: 1 << 20,
	MaxPatchLines: 50_000,
	MaxPatchFiles: 256,
	MaxPatchHunks: 4096,
	MaxMatchWork:  64 << 20,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxFileBytes > 0 {
		d.MaxFileBytes = l.MaxFileBytes
	}
	if l.MaxPatchBytes > 0 {
		d.MaxPatchBytes = l.MaxPatchBytes
	}
	if l.MaxPatchLines > 0 {
		d.MaxPatchLines = l.MaxPatchLines
	}
	if l.MaxPatchFiles > 0 {
		d.MaxPatchFiles = l.MaxPatchFiles
	}
	if l.MaxPatchHunks > 0 {
		d.MaxPatchHunks = l.MaxPatchHunks
	}
	if l.MaxMatchWork > 0 {
		d.MaxMatchWork = l.MaxMatchWork
	}
	return d
}
