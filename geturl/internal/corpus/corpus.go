// Package corpus gives tests of every geturl layer the shared nasty-string
// corpus (testdata/corpus.json beside this file): URL grammar, whitespace
// and C0 controls, quotes, Windows paths, regex, PowerShell, TS/JSX, JSON,
// diffs, emoji and escape lookalikes. Through a route each text must reach
// the tool byte for byte after Encode, a real HTTP request and Decode; an
// engine must handle each as any other text.
package corpus

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Case is one corpus entry.
type Case struct {
	Name     string `json:"name"`
	Category string `json:"category"`
	Text     string `json:"text"`
}

// CorpusPath is the corpus file's location in the source tree.
func CorpusPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "corpus.json")
}

// Load reads a corpus file.
func Load(path string) ([]Case, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f struct {
		Cases []Case `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("corpus %s: %w", path, err)
	}
	if len(f.Cases) == 0 {
		return nil, fmt.Errorf("corpus %s: no cases", path)
	}
	return f.Cases, nil
}

// Cases loads the shared corpus or fails the test.
func Cases(t testing.TB) []Case {
	t.Helper()
	cs, err := Load(CorpusPath())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
