package search

import (
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

// walkTree visits every entry below the directory host (already resolved
// inside the project) in walk's order. It never goes back to the file
// system by path: host is opened by sandbox.Open (each name relative to
// its parent's handle, no reparse point), each directory below it by
// sandbox.OpenDirAt relative to its parent's handle, which refuses
// reparse points and keeps the directory from being renamed while it is
// held. Listings and sizes come from the directory's handle
// (GetFileInformationByHandleEx, FileFullDirectoryInfo; parseDirInfo).
func walkTree(host string, fn func(rel string, e entry) walkAction) (deep bool, err error) {
	h, err := sandbox.Open(host, syscall.O_RDONLY)
	if err != nil {
		return false, err
	}
	return walk(handleDir{h}, fn), nil
}

// handleDir is a directory open at a handle with FILE_LIST_DIRECTORY.
type handleDir struct{ h syscall.Handle }

// dirInfoBuf is the listing buffer: what os.File.ReadDir uses.
const dirInfoBuf = 64 << 10

func (d handleDir) list() []entry {
	// make's 64 KiB is 8-byte aligned, as the records need.
	buf := make([]byte, dirInfoBuf)
	class := uint32(windows.FileFullDirectoryRestartInfo)
	var ents []entry
	for {
		// ERROR_NO_MORE_FILES ends a listing, ERROR_FILE_NOT_FOUND an empty
		// volume root's; any other error ends it too, with what was read.
		if windows.GetFileInformationByHandleEx(windows.Handle(d.h), class, &buf[0], uint32(len(buf))) != nil {
			return ents
		}
		class = windows.FileFullDirectoryInfo
		var err error
		if ents, err = parseDirInfo(buf, d, ents); err != nil {
			return ents
		}
	}
}

func (d handleDir) openDir(name string) (dirHandle, error) {
	h, err := sandbox.OpenDirAt(d.h, name)
	if err != nil {
		return nil, err
	}
	return handleDir{h}, nil
}

// size: every entry has its listed size.
func (handleDir) size(string) int64 { return -1 }

func (d handleDir) close() { syscall.CloseHandle(d.h) }
