package sandbox

import (
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"
)

// FD is an open file handle.
type FD = syscall.Handle

// Resolvers on Windows: the portable walk, refusing reparse points.
func Resolvers() []Resolver { return []Resolver{portable{}} }

// portable, on Windows, walks the path from its volume one component at a
// time. Each component is opened with FILE_FLAG_OPEN_REPARSE_POINT, so a
// symlink, junction or other reparse point is opened itself rather than
// followed, and is refused when GetFileInformationByHandle reports
// FILE_ATTRIBUTE_REPARSE_POINT. Every directory on the way stays open,
// shared without FILE_SHARE_DELETE, until the final name is open: while
// it is held it cannot be renamed or replaced, so the path the walk
// checked is the path it opens.
type portable struct{}

func (portable) Name() string { return "portable" }

func (portable) Open(host string, flags int) (FD, error) {
	vol := filepath.VolumeName(host)
	rest := host[len(vol):]
	if vol == "" || !strings.HasPrefix(rest, `\`) || len(host) > MaxPathBytes {
		return syscall.InvalidHandle, newErr(ErrInvalidPath)
	}
	var held []windows.Handle
	defer func() {
		for _, h := range held {
			windows.CloseHandle(h)
		}
	}()
	path := vol + `\`
	names := strings.FieldsFunc(rest, func(r rune) bool { return r == '\\' || r == '/' })
	for i, name := range names {
		if name == "." || name == ".." {
			return syscall.InvalidHandle, newErr(ErrInvalidPath)
		}
		path += name
		last := i == len(names)-1
		access, share := uint32(windows.FILE_READ_ATTRIBUTES), uint32(windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE)
		if last {
			access = accessOf(flags)
			share |= windows.FILE_SHARE_DELETE
		}
		p, err := windows.UTF16PtrFromString(path)
		if err != nil {
			return syscall.InvalidHandle, newErr(ErrInvalidPath)
		}
		h, err := windows.CreateFile(p, access, share, nil, windows.OPEN_EXISTING,
			windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
		if err != nil {
			return syscall.InvalidHandle, err
		}
		var info windows.ByHandleFileInformation
		if err := windows.GetFileInformationByHandle(h, &info); err != nil {
			windows.CloseHandle(h)
			return syscall.InvalidHandle, err
		}
		if info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
			windows.CloseHandle(h)
			return syscall.InvalidHandle, newErr(ErrSymlinkEscape)
		}
		if last {
			return syscall.Handle(h), nil
		}
		if info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY == 0 {
			windows.CloseHandle(h)
			return syscall.InvalidHandle, newErr(ErrNotDirectory)
		}
		held = append(held, h)
		path += `\`
	}
	// The volume's root itself.
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return syscall.InvalidHandle, newErr(ErrInvalidPath)
	}
	h, err := windows.CreateFile(p, accessOf(flags), windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	return syscall.Handle(h), err
}

// accessOf maps the open flags' access mode to CreateFile's.
func accessOf(flags int) uint32 {
	switch flags & (syscall.O_RDONLY | syscall.O_WRONLY | syscall.O_RDWR) {
	case syscall.O_WRONLY:
		return windows.GENERIC_WRITE
	case syscall.O_RDWR:
		return windows.GENERIC_READ | windows.GENERIC_WRITE
	}
	return windows.GENERIC_READ
}
