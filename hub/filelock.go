package hub

import "errors"

// ErrLocked is LockFile's answer, without wait, when another open file
// holds the lock.
var ErrLocked = errors.New("locked by another process")
