package sandbox

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// FD is an open file handle.
type FD = syscall.Handle

// Resolvers on Windows: the portable walk, refusing reparse points.
func Resolvers() []Resolver { return []Resolver{portable{}} }

// portable, on Windows, is openat done with NtCreateFile: it opens the
// path's volume root, then each component relative to its parent's
// handle (OBJECT_ATTRIBUTES.RootDirectory), by that one name, so no
// rename on the path can send the walk elsewhere and no name is
// reinterpreted by Win32 (a device name, a trailing dot, a '/' are just
// names there). Each component is opened with FILE_OPEN_REPARSE_POINT,
// so a symlink, junction, mount point or other reparse point is opened
// itself rather than followed, and is refused when its attributes say
// FILE_ATTRIBUTE_REPARSE_POINT. Every directory on the way stays open,
// shared without FILE_SHARE_DELETE, until the final name is open: while
// it is held it cannot be renamed or replaced. Last, the final handle's
// path (GetFinalPathNameByHandle) must be the volume's followed by the
// names walked, compared without case: a name NTFS resolved to another
// (an 8.3 short name) is refused. Scope.Open then checks that path lies
// under the root's.
type portable struct{}

func (portable) Name() string { return "portable" }

func (portable) Open(host string, flags int) (FD, error) {
	vol := filepath.VolumeName(host)
	rest := host[len(vol):]
	if vol == "" || !strings.HasPrefix(rest, `\`) || len(host) > MaxPathBytes {
		return syscall.InvalidHandle, newErr(ErrInvalidPath)
	}
	names := strings.Split(strings.Trim(rest, `\`), `\`)
	if names[0] == "" {
		names = nil
	}
	for _, name := range names {
		if err := ntName(name); err != nil {
			// Not a realpath: nothing Resolve returns has one.
			return syscall.InvalidHandle, err
		}
	}
	root, err := windows.UTF16PtrFromString(vol + `\`)
	if err != nil {
		return syscall.InvalidHandle, newErr(ErrInvalidPath)
	}
	if len(names) == 0 {
		// The volume's root itself.
		h, err := windows.CreateFile(root, accessOf(flags), windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
			nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
		return syscall.Handle(h), err
	}
	dir, err := windows.CreateFile(root, searchAccess,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return syscall.InvalidHandle, err
	}
	held := []windows.Handle{dir}
	defer func() {
		for _, h := range held {
			windows.CloseHandle(h)
		}
	}()
	volFinal, err := finalPath(dir)
	if err != nil {
		return syscall.InvalidHandle, err
	}
	for i, name := range names {
		last := i == len(names)-1
		access, share, options := uint32(searchAccess), uint32(windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE), uint32(windows.FILE_DIRECTORY_FILE)
		if last {
			access, share, options = accessOf(flags)|windows.FILE_READ_ATTRIBUTES, share|windows.FILE_SHARE_DELETE, 0
		}
		h, err := ntOpen(dir, name, access, share, options)
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
		if !last {
			held = append(held, h)
			dir = h
			continue
		}
		got, err := finalPath(h)
		if err != nil {
			windows.CloseHandle(h)
			return syscall.InvalidHandle, err
		}
		if !strings.EqualFold(got, strings.TrimRight(volFinal, `\`)+`\`+strings.Join(names, `\`)) {
			windows.CloseHandle(h)
			return syscall.InvalidHandle, newErr(ErrSymlinkEscape)
		}
		return syscall.Handle(h), nil
	}
	panic("unreachable")
}

// OpenDirAt opens the directory name in dir (a directory handle Open or
// OpenDirAt returned) relative to dir's handle, by that one name, to list
// it and open names in it: what a walk of a tree needs so it never goes
// back to the file system by path. name is one component (ntName's
// rules). A reparse point is opened itself, not followed, and refused
// with ErrSymlinkEscape; a file that is not a directory fails with
// ErrNotDirectory. While the handle is open, the directory cannot be
// renamed or replaced (it is not shared for delete).
func OpenDirAt(dir FD, name string) (FD, error) {
	if err := ntName(name); err != nil {
		return syscall.InvalidHandle, err
	}
	h, err := ntOpen(windows.Handle(dir), name, searchAccess,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, windows.FILE_DIRECTORY_FILE)
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
	return syscall.Handle(h), nil
}

// searchAccess opens a directory on the way to open names relative to
// it: what os.Root asks for its directories (listing them, as the BSDs'
// and macOS' walk must), so a directory its user may pass through but
// not list cannot be walked through.
const searchAccess = windows.FILE_LIST_DIRECTORY | windows.FILE_READ_ATTRIBUTES | windows.SYNCHRONIZE

// ntOpen opens the one name in the directory dir, not following a
// reparse point, for synchronous I/O (what os.NewFile and ReadFile
// expect of a handle). Its errors are Win32 errnos, which errors.Is
// matches against fs.ErrNotExist and fs.ErrPermission.
func ntOpen(dir windows.Handle, name string, access, share, options uint32) (windows.Handle, error) {
	n, err := windows.NewNTUnicodeString(name)
	if err != nil {
		return windows.InvalidHandle, newErr(ErrInvalidPath)
	}
	oa := windows.OBJECT_ATTRIBUTES{RootDirectory: dir, ObjectName: n, Attributes: windows.OBJ_CASE_INSENSITIVE}
	oa.Length = uint32(unsafe.Sizeof(oa))
	var h windows.Handle
	var iosb windows.IO_STATUS_BLOCK
	err = windows.NtCreateFile(&h, access|windows.SYNCHRONIZE, &oa, &iosb, nil, 0, share, windows.FILE_OPEN,
		options|windows.FILE_SYNCHRONOUS_IO_NONALERT|windows.FILE_OPEN_FOR_BACKUP_INTENT|windows.FILE_OPEN_REPARSE_POINT, 0, 0)
	if err == nil {
		return h, nil
	}
	var st windows.NTStatus
	if !errors.As(err, &st) {
		return windows.InvalidHandle, err
	}
	switch st {
	case windows.STATUS_NOT_A_DIRECTORY:
		return windows.InvalidHandle, newErr(ErrNotDirectory)
	case windows.STATUS_REPARSE_POINT_ENCOUNTERED:
		return windows.InvalidHandle, newErr(ErrSymlinkEscape)
	}
	return windows.InvalidHandle, st.Errno()
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
