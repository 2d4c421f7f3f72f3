// Package lazyre compiles a package's regular expressions on first use
// rather than at program start: every hub start and every CLI call runs
// every package's initialisation, and most expressions serve one command.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr (regexp.MustCompile) the
// first time it is called and returns the same *regexp.Regexp after.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
