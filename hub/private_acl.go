package hub

import (
	"fmt"
	"strings"
)

// Windows has no mode bits that mean anything: who may read or write a
// file is its access list (DACL). This file judges one, portably, so the
// rules run in the tests on every OS; private_windows.go only reads the
// list off an open handle and creates files and directories with an
// owner-only one.

// aceKind is the type of one access-list entry.
type aceKind int

const (
	aceAllow   aceKind = iota // ACCESS_ALLOWED_ACE_TYPE
	aceDeny                   // ACCESS_DENIED_ACE_TYPE: only ever takes access away
	aceUnknown                // any other type (callback, object): not understood, so refused
)

// ace is one entry of an access list as the judge needs it.
type ace struct {
	Kind        aceKind
	SID         string // "S-1-5-21-…"
	Mask        uint32 // the ACCESS_MASK
	InheritOnly bool   // INHERIT_ONLY_ACE: applies to children, not to this object
}

// Access rights, as Windows numbers them (winnt.h); for a directory the
// same bits mean add file, add subdirectory and delete child.
const (
	fileReadData        = 0x1
	fileWriteData       = 0x2 // directory: add a file
	fileAppendData      = 0x4 // directory: add a subdirectory
	fileReadEA          = 0x8
	fileWriteEA         = 0x10
	fileDeleteChild     = 0x40
	fileWriteAttributes = 0x100
	accessDelete        = 0x10000
	accessWriteDAC      = 0x40000
	accessWriteOwner    = 0x80000
	genericAll          = 0x10000000
	genericWrite        = 0x40000000
	genericRead         = 0x80000000

	// aclWrite is every right that lets its holder change, replace or
	// delete the object, or give itself more rights.
	aclWrite = fileWriteData | fileAppendData | fileWriteEA | fileDeleteChild | fileWriteAttributes |
		accessDelete | accessWriteDAC | accessWriteOwner | genericAll | genericWrite
	// aclRead is every right that reads the content.
	aclRead = fileReadData | fileReadEA | genericAll | genericRead
)

// Principals that may hold any right, as root may on unix: they can take
// any file anyway. OWNER RIGHTS stands for whoever owns the object.
const (
	sidSystem         = "S-1-5-18"
	sidAdministrators = "S-1-5-32-544"
	sidOwnerRights    = "S-1-3-4"
)

// aclPolicy is what judgeACL needs to know besides the list.
type aclPolicy struct {
	Path   string
	Me     string // the current user's SID
	Owner  string // the object's owner SID
	Null   bool   // the object has no DACL at all (everyone has every right)
	Dir    bool   // the object is a directory
	Secret bool   // a file holding a key: no one else may read it either
}

// judgeACL applies the private-file rules to an access list: the owner is
// the current user; no one but the owner, SYSTEM and Administrators is
// granted a right to write (for a directory: to add or remove entries),
// and for a secret none to read. The error says which principal has what
// and how to fix it with icacls, like the unix checks name chmod.
func judgeACL(p aclPolicy, entries []ace) error {
	if p.Owner != p.Me {
		return &UnsafeFileError{Path: p.Path, Problem: fmt.Sprintf("is owned by %s, not by you (%s)", p.Owner, p.Me),
			Fix: "remove it, or take ownership of it if you made it: takeown /f " + quoteArg(p.Path)}
	}
	if p.Null {
		return &UnsafeFileError{Path: p.Path, Problem: "has no access list, so every user may read and change it", Fix: ownerOnlyFix(p.Path, "")}
	}
	for _, e := range entries {
		if e.InheritOnly || e.Kind == aceDeny || trustedSID(e.SID, p.Me) {
			continue
		}
		if e.Kind == aceUnknown {
			return &UnsafeFileError{Path: p.Path, Problem: fmt.Sprintf("has an access entry for %s of a kind this check does not read", e.SID), Fix: ownerOnlyFix(p.Path, e.SID)}
		}
		switch {
		case e.Mask&aclWrite != 0 && p.Dir:
			return &UnsafeFileError{Path: p.Path, Problem: fmt.Sprintf("grants %s write access; other users could plant or replace files in it", e.SID), Fix: ownerOnlyFix(p.Path, e.SID)}
		case e.Mask&aclWrite != 0:
			return &UnsafeFileError{Path: p.Path, Problem: fmt.Sprintf("grants %s write access; other users could change it, so only you may write it", e.SID), Fix: ownerOnlyFix(p.Path, e.SID)}
		case p.Secret && e.Mask&aclRead != 0:
			return &UnsafeFileError{Path: p.Path, Problem: fmt.Sprintf("grants %s read access; it holds a key, so only you may read it", e.SID),
				Fix: ownerOnlyFix(p.Path, e.SID) + ", and restart what wrote it if the key may have leaked"}
		}
	}
	return nil
}

// othersMayRead reports whether entries let anyone but the trusted read:
// a directory others can list is tightened, as unix makes it 0700.
func othersMayRead(me string, entries []ace) bool {
	for _, e := range entries {
		if !e.InheritOnly && e.Kind == aceAllow && !trustedSID(e.SID, me) && e.Mask&aclRead != 0 {
			return true
		}
	}
	return false
}

func trustedSID(sid, me string) bool {
	return sid == me || sid == sidSystem || sid == sidAdministrators || sid == sidOwnerRights
}

// ownerOnlySDDL is the security descriptor a private file or directory
// is given: a protected DACL (nothing inherited from above) that gives
// the owner full control; a directory's entry is inherited by the files
// and directories created inside it (os.CreateTemp's, too).
func ownerOnlySDDL(me string, dir bool) string {
	if dir {
		return "D:P(A;OICI;FA;;;" + me + ")"
	}
	return "D:P(A;;FA;;;" + me + ")"
}

// ownerOnlyFix is the icacls command that leaves only the current user:
// inherited entries dropped, the user's full control granted, and the
// named principal's explicit entry removed.
func ownerOnlyFix(path, sid string) string {
	fix := "icacls " + quoteArg(path) + " /inheritance:r /grant:r %USERNAME%:F"
	if sid != "" {
		fix += " /remove *" + sid
	}
	return fix
}

// quoteArg quotes a path for cmd when it has a space.
func quoteArg(s string) string {
	if strings.ContainsAny(s, " \t") {
		return `"` + s + `"`
	}
	return s
}
