package hub

import (
	"strings"
	"testing"
)

// The Windows access-list rules, run here: private_windows.go only reads
// the list off a handle and hands it to judgeACL.
func TestJudgeACL(t *testing.T) {
	const (
		me    = "S-1-5-21-1-2-3-1001"
		other = "S-1-5-21-1-2-3-1002"
		users = "S-1-5-32-545"
		world = "S-1-1-0"
	)
	full := uint32(0x1f01ff) // FILE_ALL_ACCESS
	readOnly := uint32(0x120089)
	appendOnly := uint32(fileAppendData)
	mine := ace{Kind: aceAllow, SID: me, Mask: full}
	tests := []struct {
		name    string
		p       aclPolicy
		entries []ace
		want    []string // parts of the error; none: accepted
	}{
		{"owner only", aclPolicy{}, []ace{mine}, nil},
		{"owner, SYSTEM and Administrators (a profile's default)", aclPolicy{},
			[]ace{mine, {Kind: aceAllow, SID: sidSystem, Mask: full}, {Kind: aceAllow, SID: sidAdministrators, Mask: full}}, nil},
		{"another owner", aclPolicy{Owner: other}, []ace{mine},
			[]string{"is owned by " + other, "not by you (" + me + ")", "takeown /f"}},
		{"no DACL at all", aclPolicy{Null: true}, nil,
			[]string{"has no access list", "every user may read and change it", "icacls", "/inheritance:r"}},
		{"another user may write", aclPolicy{}, []ace{mine, {Kind: aceAllow, SID: other, Mask: full}},
			[]string{"grants " + other + " write access", "other users could change it", "/remove *" + other}},
		{"Users may append", aclPolicy{}, []ace{mine, {Kind: aceAllow, SID: users, Mask: appendOnly}},
			[]string{"grants " + users + " write access"}},
		{"Everyone may change the DACL", aclPolicy{}, []ace{mine, {Kind: aceAllow, SID: world, Mask: accessWriteDAC}},
			[]string{"grants " + world + " write access"}},
		{"GENERIC_WRITE", aclPolicy{}, []ace{mine, {Kind: aceAllow, SID: users, Mask: genericWrite}},
			[]string{"write access"}},
		{"others may read a non-secret", aclPolicy{}, []ace{mine, {Kind: aceAllow, SID: users, Mask: readOnly}}, nil},
		{"others may read a secret", aclPolicy{Secret: true}, []ace{mine, {Kind: aceAllow, SID: users, Mask: readOnly}},
			[]string{"grants " + users + " read access", "it holds a key", "restart what wrote it"}},
		{"GENERIC_READ on a secret", aclPolicy{Secret: true}, []ace{mine, {Kind: aceAllow, SID: world, Mask: genericRead}},
			[]string{"read access"}},
		{"only reading attributes of a secret", aclPolicy{Secret: true}, []ace{mine, {Kind: aceAllow, SID: world, Mask: 0x80 | 0x20000}}, nil},
		{"a deny entry takes access away", aclPolicy{Secret: true}, []ace{{Kind: aceDeny, SID: world, Mask: full}, mine}, nil},
		{"an inherit-only entry is for children", aclPolicy{Secret: true}, []ace{mine, {Kind: aceAllow, SID: world, Mask: full, InheritOnly: true}}, nil},
		{"an entry of a kind not read", aclPolicy{}, []ace{mine, {Kind: aceUnknown, SID: other}},
			[]string{"of a kind this check does not read"}},
		{"a directory others may add to", aclPolicy{Dir: true}, []ace{mine, {Kind: aceAllow, SID: users, Mask: fileWriteData}},
			[]string{"grants " + users + " write access", "plant or replace files in it"}},
		{"a directory others may delete in", aclPolicy{Dir: true}, []ace{mine, {Kind: aceAllow, SID: users, Mask: fileDeleteChild}},
			[]string{"plant or replace files in it"}},
		{"a directory others may list", aclPolicy{Dir: true}, []ace{mine, {Kind: aceAllow, SID: users, Mask: readOnly}}, nil},
		{"a path with a space is quoted", aclPolicy{Path: `C:\Users\a b\hub.json`}, []ace{mine, {Kind: aceAllow, SID: other, Mask: full}},
			[]string{`icacls "C:\Users\a b\hub.json" /inheritance:r`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.p
			p.Me = me
			if p.Owner == "" {
				p.Owner = me
			}
			if p.Path == "" {
				p.Path = `C:\Users\a\AppData\Local\hub\hub.json`
			}
			err := judgeACL(p, tt.entries)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			wantUnsafeParts(t, err, append(tt.want, p.Path)...)
		})
	}
}

func wantUnsafeParts(t *testing.T, err error, parts ...string) {
	t.Helper()
	ue, ok := err.(*UnsafeFileError)
	if !ok || ue.Unwrap() != ErrUnsafeFile {
		t.Fatalf("err = %v, want an UnsafeFileError", err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("err = %q, want it to mention %q", err, p)
		}
	}
}

// A directory is tightened (an owner-only DACL set) exactly when someone
// untrusted may read it, as unix makes one 0700 that is not.
func TestOthersMayRead(t *testing.T) {
	const me = "S-1-5-21-9-1001"
	for _, tt := range []struct {
		entries []ace
		want    bool
	}{
		{[]ace{{Kind: aceAllow, SID: me, Mask: genericAll}}, false},
		{[]ace{{Kind: aceAllow, SID: sidSystem, Mask: genericAll}}, false},
		{[]ace{{Kind: aceAllow, SID: "S-1-5-32-545", Mask: fileReadData}}, true},
		{[]ace{{Kind: aceAllow, SID: "S-1-5-32-545", Mask: genericRead, InheritOnly: true}}, false},
		{[]ace{{Kind: aceDeny, SID: "S-1-1-0", Mask: genericRead}}, false},
		{[]ace{{Kind: aceAllow, SID: "S-1-1-0", Mask: 0x80}}, false}, // attributes only
	} {
		if got := othersMayRead(me, tt.entries); got != tt.want {
			t.Errorf("othersMayRead(%+v) = %v, want %v", tt.entries, got, tt.want)
		}
	}
}

func TestOwnerOnlySDDL(t *testing.T) {
	if got := ownerOnlySDDL("S-1-5-21-7", false); got != "D:P(A;;FA;;;S-1-5-21-7)" {
		t.Errorf("file: %s", got)
	}
	// A directory's entry is inherited by what is created in it.
	if got := ownerOnlySDDL("S-1-5-21-7", true); got != "D:P(A;OICI;FA;;;S-1-5-21-7)" {
		t.Errorf("dir: %s", got)
	}
}
