package search

import (
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

// rgDir holds dir, as resolved, so rg can start in it by path: Windows
// has no /proc/self/fd to name a held directory, but a directory held
// open without FILE_SHARE_DELETE cannot be renamed or removed. So every
// directory on the path is opened relative to its parent's handle
// (sandbox.OpenDirAt: no reparse point, not shared for delete) and held
// until rg has ended; then sandbox.Open checks the path names what was
// walked (no short name resolved elsewhere). While held, no directory on
// the path can be swapped for a junction to outside, so rg starts in the
// project. What rg then reads below is checked file by file (rgFile).
func rgDir(dir string) (cmdDir string, release func(), err error) {
	vol := filepath.VolumeName(dir)
	rest := strings.Trim(dir[len(vol):], `\`)
	root, err := windows.UTF16PtrFromString(vol + `\`)
	if err != nil {
		return "", nil, err
	}
	h, err := windows.CreateFile(root, windows.FILE_LIST_DIRECTORY|windows.FILE_READ_ATTRIBUTES|windows.SYNCHRONIZE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return "", nil, err
	}
	held := []syscall.Handle{syscall.Handle(h)}
	release = func() {
		for _, h := range held {
			syscall.CloseHandle(h)
		}
	}
	if rest != "" {
		for _, name := range strings.Split(rest, `\`) {
			h, err := sandbox.OpenDirAt(held[len(held)-1], name)
			if err != nil {
				release()
				return "", nil, err
			}
			held = append(held, h)
		}
	}
	check, err := sandbox.Open(dir, syscall.O_RDONLY)
	if err != nil {
		release()
		return "", nil, err
	}
	syscall.CloseHandle(check)
	return dir, release, nil
}
