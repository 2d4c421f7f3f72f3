package files

import "errors"

// mkfifo: Windows has no FIFOs in the file system (and no sandbox scope
// yet, so the fixture that wants one does not run there).
func mkfifo(string) error { return errors.ErrUnsupported }
