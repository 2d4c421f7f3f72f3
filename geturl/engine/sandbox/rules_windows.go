package sandbox

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/windows"
)

// hostRules: Windows' (see rules).
func hostRules() rules { return rules{windows: true} }

// opaque reports a reparse point that is no symlink: a junction, a mount
// point, and the placeholders of cloud and deduplicated files. os.Lstat
// follows none of them, and the walk cannot judge where they lead, so it
// refuses them, as the resolver refuses every reparse point.
func opaque(fi fs.FileInfo) bool {
	if fi.Mode()&fs.ModeSymlink != 0 {
		return false
	}
	a, ok := fi.Sys().(*syscall.Win32FileAttributeData)
	return fi.Mode()&fs.ModeIrregular != 0 || ok && a.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0
}

// finalRoot is the root as GetFinalPathNameByHandle names it (`\\?\C:\...`,
// every name in its on-disk case and long form, a subst drive resolved):
// the form Scope.Open compares an opened handle's path with.
func finalRoot(real string) (string, error) {
	p, err := windows.UTF16PtrFromString(real)
	if err != nil {
		return "", err
	}
	h, err := windows.CreateFile(p, windows.FILE_READ_ATTRIBUTES, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return "", &fs.PathError{Op: "scope", Path: real, Err: err}
	}
	defer windows.CloseHandle(h)
	return finalPath(h)
}

// finalPath is GetFinalPathNameByHandle of h with flags 0: FILE_NAME_NORMALIZED, and its DOS
// volume name.
func finalPath(h windows.Handle) (string, error) {
	buf := make([]uint16, windows.MAX_PATH)
	for {
		n, err := windows.GetFinalPathNameByHandle(h, &buf[0], uint32(len(buf)), 0)
		if err != nil {
			return "", err
		}
		if int(n) < len(buf) {
			return windows.UTF16ToString(buf[:n]), nil
		}
		buf = make([]uint16, n+1)
	}
}

// beneath checks the opened handle's final path lies under the root's
// (finalRoot), comparing names exactly: both come from the file system,
// so a case-sensitive directory's sibling spelled like the root in
// another case, an 8.3 alias, or any reparse the resolver missed, shows
// here. It closes fd when it refuses it.
func (s *Scope) beneath(fd FD) (FD, error) {
	p, err := finalPath(windows.Handle(fd))
	if err == nil && contains(s.final, p, '\\', false) {
		return fd, nil
	}
	syscall.CloseHandle(fd)
	if err != nil {
		return syscall.InvalidHandle, err
	}
	return syscall.InvalidHandle, newErr(ErrSymlinkEscape)
}
