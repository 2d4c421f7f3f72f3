package search

import (
	"strconv"
	"syscall"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

// rgDir opens dir, as resolved, and names it for rg's working directory
// through the descriptor: the child changes into /proc/self/fd/N (read
// before exec: its copy of the descriptor), so a directory on the way
// renamed for a link to outside since resolving cannot send it elsewhere.
// release closes the descriptor once rg has started and ended.
func rgDir(dir string) (cmdDir string, release func(), err error) {
	dfd, err := sandbox.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY)
	if err != nil {
		return "", nil, err
	}
	return "/proc/self/fd/" + strconv.Itoa(dfd), func() { syscall.Close(dfd) }, nil
}
