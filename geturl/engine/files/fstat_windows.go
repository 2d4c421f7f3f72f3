package files

import (
	"golang.org/x/sys/windows"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

// fstat says what fd is open on, its size and its modification time. A
// reparse point never gets here (the sandbox refuses it); a device or
// pipe is neither a file nor a directory.
func fstat(fd sandbox.FD) (fileStat, error) {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(fd), &info); err != nil {
		return fileStat{}, err
	}
	s := fileStat{size: int64(info.FileSizeHigh)<<32 | int64(info.FileSizeLow), mtime: info.LastWriteTime.Nanoseconds()}
	switch {
	case info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0:
		s.kind = statDir
	case info.FileAttributes&(windows.FILE_ATTRIBUTE_DEVICE|windows.FILE_ATTRIBUTE_REPARSE_POINT) == 0:
		if t, err := windows.GetFileType(windows.Handle(fd)); err == nil && t == windows.FILE_TYPE_DISK {
			s.kind = statRegular
		}
	}
	return s, nil
}
