package hub

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// A KeptFile is a file a running process keeps in place: a control,
// session or state file others find it by. A deleted or damaged one would
// otherwise hide a live process from every client until it restarts.
type KeptFile struct {
	// Name says what the file is in log lines ("the state file").
	Name string
	Path string
	// Check says why the file on disk is not what it should be ("" when
	// it is) and how to put it right. A nil fix means the file must be
	// left as it is now (another process's, say): that is logged as an
	// error.
	Check func() (why string, fix func() error)
}

// KeepInterval is how often a hub's one FileKeeper checks every kept
// file: a state, session, control file or registry record deleted,
// damaged or replaced by another process is put back within this long.
// Clients that find the file missing meanwhile say "not running"; ten
// seconds is as long as a user retrying a command waits, and one check
// of every file per period costs an idle hub about a millisecond of CPU
// per check instead of a wake-up per file every two seconds.
const KeepInterval = 10 * time.Second

// A FileKeeper checks the files registered with it, all on one ticker, and
// puts right what drifted. A hub makes one and passes it to everything that
// keeps a file (adapters.Env.Files), so an idle hub wakes once per period
// however many files it keeps. The zero value is not usable: use
// NewFileKeeper.
type FileKeeper struct {
	every time.Duration

	// mu (a channel of one, locked by a send) is held for a whole round
	// of checks, so a set's stop returns only once no check or fix of it
	// runs any more. A channel rather than a sync.Mutex: a stop waiting on
	// it is durably blocked for testing/synctest.
	mu   chan struct{}
	sets map[*keptSet]struct{}
}

type keptSet struct {
	log   *slog.Logger
	files []KeptFile
	thin  LogThinner
}

// NewFileKeeper returns a keeper that checks every every (KeepInterval
// when every <= 0) once Run runs.
func NewFileKeeper(every time.Duration) *FileKeeper {
	if every <= 0 {
		every = KeepInterval
	}
	return &FileKeeper{every: every, mu: make(chan struct{}, 1), sets: make(map[*keptSet]struct{})}
}

// Every is the period of k's one ticker.
func (k *FileKeeper) Every() time.Duration { return k.every }

// Kept is how many files are registered now.
func (k *FileKeeper) Kept() int {
	k.mu <- struct{}{}
	defer func() { <-k.mu }()
	n := 0
	for s := range k.sets {
		n += len(s.files)
	}
	return n
}

// Keep registers files, logged on log, until stop is called. stop returns
// once no check or fix of them runs, and none will again: a caller that
// removes its file on the way out calls stop first, or the keeper could
// put the file back.
func (k *FileKeeper) Keep(log *slog.Logger, files ...KeptFile) (stop func()) {
	s := &keptSet{log: log, files: files}
	k.mu <- struct{}{}
	k.sets[s] = struct{}{}
	<-k.mu
	var once sync.Once
	return func() {
		once.Do(func() {
			k.mu <- struct{}{}
			delete(k.sets, s)
			<-k.mu
		})
	}
}

// Run checks every registered file once per period until ctx is done.
func (k *FileKeeper) Run(ctx context.Context) {
	t := time.NewTicker(k.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		k.check()
	}
}

// check runs one round over every registered file.
func (k *FileKeeper) check() {
	k.mu <- struct{}{}
	defer func() { <-k.mu }()
	for s := range k.sets {
		for _, f := range s.files {
			why, fix := f.Check()
			switch {
			case why == "":
			case fix == nil:
				s.thin.Log(s.log, slog.LevelError, "cannot keep "+f.Path, "cannot keep "+f.Name, "path", f.Path, "why", why)
			default:
				if err := fix(); err != nil {
					s.thin.Log(s.log, slog.LevelError, "cannot rewrite "+f.Path, "cannot rewrite "+f.Name, "path", f.Path, "why", why, "err", err)
				} else {
					s.thin.Warn(s.log, "rewrote "+f.Path, "rewrote "+f.Name, "path", f.Path, "why", why)
				}
			}
		}
	}
}

// KeepFiles keeps files until ctx is done: on k when it is not nil (a
// hub's shared keeper, whose period then applies), else on a ticker of its
// own every interval (a bridge running alone). Something that keeps
// deleting a file costs a thinned log line, not one per check. It returns
// once no check or fix of files runs any more.
func KeepFiles(ctx context.Context, k *FileKeeper, every time.Duration, log *slog.Logger, files ...KeptFile) {
	if k == nil {
		k = NewFileKeeper(every)
		defer k.Keep(log, files...)()
		k.Run(ctx)
		return
	}
	defer k.Keep(log, files...)()
	<-ctx.Done()
}
