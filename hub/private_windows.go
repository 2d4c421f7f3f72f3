package hub

import (
	"errors"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows the private-file rules read the access list: see
// private_acl.go for the rules, here for how the list is read and set.
// A file OpenPrivate creates, and a directory EnsurePrivateDir tightens,
// get an owner-only protected DACL; what is created inside such a
// directory inherits it. Links are never followed: every open passes
// FILE_FLAG_OPEN_REPARSE_POINT, so a symbolic link, junction or other
// reparse point is opened itself and refused.

// openNoFollow opens path as os.OpenFile would with flag, except that a
// reparse point is opened itself (and refused) rather than followed, and
// a file it creates gets an owner-only DACL. The handle may read its own
// security information (READ_CONTROL) for checkAccess.
func openNoFollow(path string, flag int, _ os.FileMode) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var access uint32 = windows.READ_CONTROL | windows.SYNCHRONIZE
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		access |= windows.GENERIC_READ
	case os.O_WRONLY:
		access |= windows.GENERIC_WRITE
	case os.O_RDWR:
		access |= windows.GENERIC_READ | windows.GENERIC_WRITE
	}
	if flag&os.O_APPEND != 0 {
		// as os.OpenFile: appends only, wherever the offset is
		access &^= windows.GENERIC_WRITE
		access |= windows.FILE_APPEND_DATA | windows.FILE_WRITE_ATTRIBUTES | windows.FILE_WRITE_EA | windows.STANDARD_RIGHTS_WRITE
	}
	// Truncation waits until the file was checked (see below), so the
	// disposition never replaces what is there.
	var disposition uint32 = windows.OPEN_EXISTING
	switch {
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		disposition = windows.CREATE_NEW
	case flag&os.O_CREATE != 0:
		disposition = windows.OPEN_ALWAYS
	}
	var sa *windows.SecurityAttributes
	if flag&os.O_CREATE != 0 {
		if sa, err = ownerOnlyAttributes(false); err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
	}
	h, err := windows.CreateFile(p, access,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, sa, disposition,
		windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if reparse, err := isReparsePoint(h); err != nil || reparse {
		windows.CloseHandle(h)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return nil, linkError(path)
	}
	f := os.NewFile(uintptr(h), path)
	if flag&os.O_TRUNC != 0 {
		fi, err := f.Stat()
		if err == nil {
			err = checkPrivate(path, f, fi, false)
		}
		if err == nil {
			err = f.Truncate(0)
		}
		if err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

func isReparsePoint(h windows.Handle) (bool, error) {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		return false, err
	}
	return info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0, nil
}

// checkAccess reads the file's owner and DACL off its handle and judges
// them (judgeACL).
func checkAccess(path string, f *os.File, _ os.FileInfo, secret bool) error {
	return checkHandleACL(path, windows.Handle(f.Fd()), false, secret)
}

func checkHandleACL(path string, h windows.Handle, dir, secret bool) error {
	p, entries, err := readACL(path, h)
	if err != nil {
		return err
	}
	p.Dir, p.Secret = dir, secret
	return judgeACL(p, entries)
}

// readACL reads h's owner and DACL into the portable form judgeACL reads.
func readACL(path string, h windows.Handle) (aclPolicy, []ace, error) {
	me, err := currentSID()
	if err != nil {
		return aclPolicy{}, nil, err
	}
	sd, err := windows.GetSecurityInfo(h, windows.SE_FILE_OBJECT,
		windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return aclPolicy{}, nil, &os.PathError{Op: "reading the access list of", Path: path, Err: err}
	}
	p := aclPolicy{Path: path, Me: me}
	owner, _, err := sd.Owner()
	if err != nil || owner == nil {
		return aclPolicy{}, nil, &os.PathError{Op: "reading the owner of", Path: path, Err: errors.New("no owner")}
	}
	p.Owner = owner.String()
	dacl, _, err := sd.DACL()
	switch {
	case errors.Is(err, windows.ERROR_OBJECT_NOT_FOUND), err == nil && dacl == nil:
		p.Null = true
		return p, nil, nil
	case err != nil:
		return aclPolicy{}, nil, &os.PathError{Op: "reading the access list of", Path: path, Err: err}
	}
	entries := make([]ace, 0, dacl.AceCount)
	for i := range uint32(dacl.AceCount) {
		var a *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &a); err != nil {
			return aclPolicy{}, nil, &os.PathError{Op: "reading the access list of", Path: path, Err: err}
		}
		e := ace{Mask: uint32(a.Mask), InheritOnly: a.Header.AceFlags&windows.INHERIT_ONLY_ACE != 0}
		switch a.Header.AceType {
		case windows.ACCESS_ALLOWED_ACE_TYPE:
			e.Kind = aceAllow
		case windows.ACCESS_DENIED_ACE_TYPE:
			e.Kind = aceDeny
		default:
			e.Kind = aceUnknown
		}
		if e.Kind != aceUnknown {
			// Both types put the SID where SidStart begins.
			e.SID = (*windows.SID)(unsafe.Pointer(&a.SidStart)).String()
		}
		entries = append(entries, e)
	}
	return p, entries, nil
}

// currentSID is the SID of the user this process runs as.
func currentSID() (string, error) {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return "", err
	}
	return u.User.Sid.String(), nil
}

func ownerOnlyAttributes(dir bool) (*windows.SecurityAttributes, error) {
	me, err := currentSID()
	if err != nil {
		return nil, err
	}
	sd, err := windows.SecurityDescriptorFromString(ownerOnlySDDL(me, dir))
	if err != nil {
		return nil, err
	}
	return &windows.SecurityAttributes{Length: uint32(unsafe.Sizeof(windows.SecurityAttributes{})), SecurityDescriptor: sd}, nil
}

// openPrivateDir opens dir itself (never through a reparse point) and
// checks its owner and access list on the handle.
func openPrivateDir(dir string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	h, err := windows.CreateFile(p, windows.READ_CONTROL|windows.WRITE_DAC|windows.FILE_LIST_DIRECTORY|windows.SYNCHRONIZE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	var info windows.ByHandleFileInformation
	err = windows.GetFileInformationByHandle(h, &info)
	switch {
	case err != nil:
		err = &os.PathError{Op: "open", Path: dir, Err: err}
	case info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0:
		err = dirLinkError(dir)
	case info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY == 0:
		err = &UnsafeFileError{Path: dir, Problem: "is not a directory", Fix: "remove it: del " + quoteArg(dir)}
	default:
		err = checkHandleACL(dir, h, true, false)
	}
	if err != nil {
		windows.CloseHandle(h)
		return nil, err
	}
	return os.NewFile(uintptr(h), dir), nil
}

// tightenDir gives a checked directory an owner-only protected DACL when
// others could read it (what chmod 700 is on unix).
func tightenDir(f *os.File) error {
	h := windows.Handle(f.Fd())
	p, entries, err := readACL(f.Name(), h)
	if err != nil {
		return err
	}
	if !othersMayRead(p.Me, entries) {
		return nil
	}
	sd, err := windows.SecurityDescriptorFromString(ownerOnlySDDL(p.Me, true))
	if err != nil {
		return err
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return err
	}
	if err := windows.SetSecurityInfo(h, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
		return &os.PathError{Op: "making private", Path: f.Name(), Err: err}
	}
	return nil
}
