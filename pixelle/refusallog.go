package pixelle

import (
	"log/slog"
	"time"

	"github.com/hubdev/hub/hub"
)

// Thinning of the log lines of failures that need no credential to cause:
// a socket's failed login (a first frame that is no JSON or no hello, a
// wrong browser or agent token), the relay's close of such a socket, and a
// refused pairing code. Any local process can cause them as fast as the
// loopback carries them, so each kind is logged in full
// FailedLoginLogBurst times; after that one line per FailedLoginLogPeriod
// says how many more there were (its "suppressed"), for as long as they go
// on, and a summary still due is written when the relay stops. Memory is
// bounded by the kinds, which are fixed.
const (
	FailedLoginLogBurst  = 3
	FailedLoginLogPeriod = time.Minute
)

// newRefusalLog is the thinner of one run of the relay.
func newRefusalLog() *hub.LogThinner {
	return &hub.LogThinner{Burst: FailedLoginLogBurst, Period: FailedLoginLogPeriod}
}

// refusedLocked logs a failure of kind key that needs no credential,
// thinned (see FailedLoginLogBurst). Called under rl.mu.
func (rl *relay) refusedLocked(key, msg string, args ...any) {
	rl.refusals.Log(rl.log, slog.LevelInfo, key, msg, args...)
}
