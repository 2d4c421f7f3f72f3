package terminal

import (
	"runtime"
	"strings"

	"github.com/hubdev/hub/hub/childenv"
)

// childEnv is the environment of a terminal child: base without secrets
// (childenv.Strip, with the adapter's extra name patterns, names matched
// without case), without PWD and OLDPWD (they name the hub's own
// directory, a host path), and with PWD set to the child's working
// directory so `pwd` agrees with the shell. On Windows, where variable
// names ignore case, "Pwd" and "oldpwd" are PWD and OLDPWD too
// (childEnvFold).
func childEnv(base []string, extra []string, dir string) []string {
	return childEnvFold(base, extra, dir, runtime.GOOS == "windows")
}

// childEnvFold is childEnv with names compared without case when fold.
func childEnvFold(base []string, extra []string, dir string, fold bool) []string {
	out := childenv.Strip(base, extra...)
	n := 0
	for _, kv := range out {
		name, _, _ := strings.Cut(kv, "=")
		if fold {
			name = strings.ToUpper(name)
		}
		if name != "PWD" && name != "OLDPWD" {
			out[n] = kv
			n++
		}
	}
	return append(out[:n], "PWD="+dir)
}
