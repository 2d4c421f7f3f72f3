package session

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/hub"
)

// TokensFileName is the file, beside the registry, that keeps each live
// session's capabilities across a restart of the process, so the URLs an
// agent holds keep working. It is a secret file (0600, this user's,
// checked on every read like hub.json): the tokens are kept in the clear
// because the control page must show the Init URL again after a restart
// and Init must hand out the read and mutation bases, and none can be
// rebuilt from a hash.
//
// The mutation capability is kept only together with its generation's
// durable intent journal (JournalsDirName): a new process restores the
// journal, so a mutation URL fetched again after the restart answers the
// intent it named and never runs it twice. When the journal cannot be
// restored (missing, unsafe, corrupt) the mutation token is new, and the
// old mutation URL is an opaque 404.
const TokensFileName = "tokens.json"

// maxTokensBytes bounds the file: MaxEnabled sessions of ~100 bytes each,
// with room to spare.
const maxTokensBytes = 64 << 10

// tokensFile is the document.
type tokensFile struct {
	Version  int                   `json:"version"`
	Sessions map[string]keptTokens `json:"sessions"`
}

// keptTokens are one live session's capabilities that survive a restart.
type keptTokens struct {
	Init string    `json:"init"`
	Read string    `json:"read"`
	Born time.Time `json:"born"`
	// Mutation and Journal are the mutation token and the name of its
	// durable journal, both or neither.
	Mutation string `json:"mutation,omitempty"`
	Journal  string `json:"journal,omitempty"`
}

func (k keptTokens) valid() bool { return isToken(k.Init) && isToken(k.Read) && k.Init != k.Read }

func isToken(s string) bool {
	if len(s) != TokenLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

func tokensPath(registryPath string) string {
	return filepath.Join(filepath.Dir(registryPath), TokensFileName)
}

// loadKept reads the kept tokens. A missing file is none; an unsafe or
// corrupt one is reported and ignored (its sessions get new tokens, and
// the file is rewritten): a file another user could have planted never
// decides which URLs open a project.
func loadKept(path string) (map[string]keptTokens, error) {
	b, err := hub.ReadPrivateFile(path, maxTokensBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f tokensFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	if f.Version != 1 {
		return nil, errors.New("unknown version")
	}
	out := make(map[string]keptTokens, len(f.Sessions))
	for id, k := range f.Sessions {
		if k.valid() {
			out[id] = k
		}
	}
	return out, nil
}

// saveKeptLocked writes every live generation's Init and read tokens, and
// its mutation token while its journal is durable. A failure is logged:
// the URLs work until the next restart.
func (m *Manager) saveKeptLocked() {
	f := tokensFile{Version: 1, Sessions: make(map[string]keptTokens, len(m.live))}
	for id, g := range m.live {
		k := keptTokens{Init: g.Token(route.CapInit), Read: g.Token(route.CapRead), Born: g.born.UTC()}
		if g.journalID != "" && g.mut.Journal.Durable() {
			k.Mutation, k.Journal = g.Token(route.CapMutation), g.journalID
		}
		f.Sessions[id] = k
	}
	b, _ := json.Marshal(f)
	path := tokensPath(m.opts.Path)
	err := hub.EnsurePrivateDir(filepath.Dir(path))
	if err == nil {
		err = hub.WriteFileAtomic(path, append(b, '\n'), 0o600)
	}
	if err != nil {
		m.opts.Log.Warn("cannot keep session tokens; Init URLs will not survive a restart", "file", path, "err", err)
	}
}
