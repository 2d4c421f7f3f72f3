package terminal

import (
	"strings"

	"github.com/hubdev/hub/hub/childenv"
)

// childEnv is the environment of a terminal child: base without secrets
// (childenv.Strip, with the adapter's extra name patterns), without PWD
// and OLDPWD (they name the hub's own directory, a host path), and with
// PWD set to the child's working directory so `pwd` agrees with the shell.
func childEnv(base []string, extra []string, dir string) []string {
	out := childenv.Strip(base, extra...)
	n := 0
	for _, kv := range out {
		if !strings.HasPrefix(kv, "PWD=") && !strings.HasPrefix(kv, "OLDPWD=") {
			out[n] = kv
			n++
		}
	}
	return append(out[:n], "PWD="+dir)
}
