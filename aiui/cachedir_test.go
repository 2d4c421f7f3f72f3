package aiui

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
)

// The backends' registry lives under XDG_CACHE_HOME when it is set, not
// in ~/.cache regardless; unset, it is the spec's ~/.cache/aiui/mcp.
func TestRegistryHonoursXDGCacheHome(t *testing.T) {
	dirs := adaptertest.TempDirs(t)
	cache := filepath.Join(t.TempDir(), "cache")
	t.Setenv("XDG_CACHE_HOME", cache)
	dirs.Cache = cache
	cfg := DefaultConfig()
	cfg.Port = 0
	adaptertest.Start(t, New(cfg), adaptertest.Options{Dirs: &dirs})
	want := filepath.Join(cache, "aiui", "mcp", strconv.Itoa(os.Getpid())+".json")
	if _, err := os.Stat(want); err != nil {
		t.Fatalf("registry record not under XDG_CACHE_HOME: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dirs.Home, ".cache", "aiui")); !os.IsNotExist(err) {
		t.Fatalf("~/.cache/aiui made although XDG_CACHE_HOME is set: %v", err)
	}
	if def := adaptertest.TempDirs(t); RegistryDir(def) != filepath.Join(def.Home, ".cache", "aiui", "mcp") {
		t.Fatalf("default registry dir %s", RegistryDir(def))
	}
}
