package sandbox

import "errors"

// pathRulesSupported refuses on Windows. The scope's rules (resolve.go)
// are written for slash-separated paths with one root; Windows paths have
// volumes, backslashes, 8.3 aliases, alternate data streams and reserved
// device names, none of which they judge yet. A scope that judged them
// wrongly could let a path out of the project, so there is none: every
// geturl session on Windows fails to start with this error instead.
func pathRulesSupported() error {
	return errors.New("geturl's project sandbox is not available on windows in this build: its path rules are written for unix paths")
}
