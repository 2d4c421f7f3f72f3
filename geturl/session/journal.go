package session

import (
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hubdev/hub/geturl/engine/intents"
	"github.com/hubdev/hub/hub"
)

// JournalsDirName is the directory, beside the registry, of the live
// generations' intent journals: one file per generation that can mutate,
// <session>.<journal id>.jsonl, private like every state file. A
// generation's file is deleted when its authority ends (rotation, stop,
// deletion); a file no live generation names is removed at Open.
const JournalsDirName = "journals"

const journalExt = ".jsonl"

func journalsDir(registryPath string) string {
	return filepath.Join(filepath.Dir(registryPath), JournalsDirName)
}

func journalPath(dir, session, id string) string {
	return filepath.Join(dir, session+"."+id+journalExt)
}

// newJournalID names a new generation's journal: random, so a rotated
// generation never shares a file name with the one it replaces, and
// unrelated to any token.
func newJournalID() string { return strings.ToLower(hub.RandomHex(8)) }

func isJournalID(s string) bool {
	if len(s) != 16 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// mutationJournal is a generation's mutation token and journal: the kept
// ones when kept names them and their journal file loads (a restart), else
// a new token with a new durable journal. A journal file that is missing,
// unsafe or corrupt is logged and never trusted: the old mutation token is
// retired with it, so no URL from before the restart can execute anything
// against a journal that may not know what it already ran. When no file
// can be made the journal is kept in memory and its token is not kept
// (id is "").
func mutationJournal(dir, session string, kept *keptTokens, taken func(string) bool, now func() time.Time, log *slog.Logger) (token, id string, j *intents.Journal) {
	o := intents.Options{Now: now}
	if kept != nil && kept.Mutation != "" && dir != "" {
		if !isToken(kept.Mutation) || taken(kept.Mutation) || !isJournalID(kept.Journal) {
			log.Warn("kept mutation capability is malformed; the session gets a new mutation base", "session", session)
		} else {
			path := journalPath(dir, session, kept.Journal)
			loaded, err := intents.Load(path, intents.FileID{Session: session, Generation: kept.Journal}, o)
			if err == nil {
				return kept.Mutation, kept.Journal, loaded
			}
			why := "cannot be read"
			switch {
			case errors.Is(err, fs.ErrNotExist):
				why = "is missing"
			case errors.Is(err, hub.ErrUnsafeFile):
				why = "is not private to this user"
			case errors.Is(err, intents.ErrCorrupt):
				why = "is corrupt"
			}
			log.Warn("intent journal "+why+"; its mutation URLs from before the restart are retired and the session gets a new mutation base (fetch the Init URL again)",
				"session", session, "file", path, "err", err)
		}
	}
	for token = newToken(); taken(token); token = newToken() {
	}
	if dir != "" {
		id = newJournalID()
		created, err := intents.Create(journalPath(dir, session, id), intents.FileID{Session: session, Generation: id}, o)
		if err == nil {
			return token, id, created
		}
		log.Warn("cannot keep the intent journal; this session's mutation URLs will not survive a restart",
			"session", session, "dir", dir, "err", err)
	}
	return token, "", intents.New(o)
}

// sweepJournals removes the journal files no live generation names: those
// of generations that ended while their removal failed, or refused at Open.
func (m *Manager) sweepJournalsLocked() {
	dir := journalsDir(m.opts.Path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	keep := map[string]bool{}
	for id, g := range m.live {
		if g.journalID != "" {
			keep[filepath.Base(journalPath(dir, id, g.journalID))] = true
		}
	}
	for _, e := range entries {
		name := e.Name()
		if keep[name] || !strings.HasSuffix(name, journalExt) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			m.opts.Log.Warn("cannot remove an ended session's intent journal", "file", filepath.Join(dir, name), "err", err)
		}
	}
}
