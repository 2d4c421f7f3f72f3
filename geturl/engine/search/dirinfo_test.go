package search

import (
	"encoding/binary"
	"io/fs"
	"slices"
	"testing"
	"unicode/utf16"
)

// dirInfoRecord is one FILE_FULL_DIR_INFO record as Windows writes it,
// padded to 8 bytes; last sets NextEntryOffset 0.
func dirInfoRecord(name string, attrs uint32, size int64, last bool) []byte {
	u := utf16.Encode([]rune(name))
	n := dirInfoName + 2*len(u)
	rec := make([]byte, (n+7)&^7)
	if !last {
		binary.LittleEndian.PutUint32(rec[dirInfoNext:], uint32(len(rec)))
	}
	binary.LittleEndian.PutUint64(rec[dirInfoEndOfFile:], uint64(size))
	binary.LittleEndian.PutUint32(rec[dirInfoAttributes:], attrs)
	binary.LittleEndian.PutUint32(rec[dirInfoNameLength:], uint32(2*len(u)))
	binary.LittleEndian.PutUint32(rec[64:], 0xA000000C) // EaSize: a reparse tag, ignored
	for i, c := range u {
		binary.LittleEndian.PutUint16(rec[dirInfoName+2*i:], c)
	}
	return rec
}

func TestParseDirInfo(t *testing.T) {
	const (
		archive   = 0x20
		junction  = fileAttributeDirectory | fileAttributeReparsePoint
		symlinkTo = fileAttributeReparsePoint | archive
	)
	buf := slices.Concat(
		dirInfoRecord(".", fileAttributeDirectory, 0, false),
		dirInfoRecord("..", fileAttributeDirectory, 0, false),
		dirInfoRecord("main.go", archive, 1234, false),
		dirInfoRecord("src", fileAttributeDirectory, 0, false),
		dirInfoRecord("junction", junction, 0, false),
		dirInfoRecord("link.txt", symlinkTo, 0, false),
		dirInfoRecord("CON", fileAttributeDevice, 0, false),
		dirInfoRecord("日本語 😀.txt", archive, 1<<40, false),
		dirInfoRecord("huge", archive, -5, true),
		[]byte("garbage past the last record"),
	)
	type got struct {
		name string
		mode fs.FileMode
		size int64
	}
	want := []got{
		{"main.go", 0, 1234}, {"src", fs.ModeDir, 0}, {"junction", fs.ModeSymlink, 0},
		{"link.txt", fs.ModeSymlink, 0}, {"CON", fs.ModeDevice, 0}, {"日本語 😀.txt", 0, 1 << 40}, {"huge", 0, -1},
	}
	ents, err := parseDirInfo(buf, nil, nil)
	var have []got
	for _, e := range ents {
		have = append(have, got{e.name, e.mode, e.listed})
	}
	if err != nil || !slices.Equal(have, want) {
		t.Errorf("parseDirInfo = %v, %v; want %v", have, err, want)
	}
}

func TestParseDirInfoRefusesMalformed(t *testing.T) {
	good := dirInfoRecord("a.txt", 0x20, 1, true)
	set := func(off int, v uint32) []byte {
		b := slices.Clone(good)
		binary.LittleEndian.PutUint32(b[off:], v)
		return b
	}
	for name, buf := range map[string][]byte{
		"empty":               nil,
		"short header":        good[:dirInfoName-1],
		"name past the end":   set(dirInfoNameLength, 1<<20),
		"odd name length":     set(dirInfoNameLength, 3),
		"empty name":          set(dirInfoNameLength, 0),
		"next inside itself":  set(dirInfoNext, 8),
		"next past the end":   set(dirInfoNext, uint32(len(good)+8)),
		"next to a torn last": slices.Concat(dirInfoRecord("b", 0, 0, false), good[:40]),
	} {
		if _, err := parseDirInfo(buf, nil, nil); err != errDirInfo {
			t.Errorf("%s: err %v, want errDirInfo", name, err)
		}
	}
}

func FuzzParseDirInfo(f *testing.F) {
	f.Add(slices.Concat(dirInfoRecord("a", 0x10, 0, false), dirInfoRecord("b.txt", 0x20, 9, true)))
	f.Add(dirInfoRecord("x", 0x400, 1, false))
	f.Fuzz(func(t *testing.T, buf []byte) {
		ents, _ := parseDirInfo(buf, nil, nil)
		// Each record takes at least dirInfoName+2 bytes.
		if len(ents) > len(buf)/(dirInfoName+2) {
			t.Fatalf("%d entries from %d bytes", len(ents), len(buf))
		}
		for _, e := range ents {
			if e.name == "" || e.name == "." || e.name == ".." || e.listed < -1 {
				t.Fatalf("entry %+v", e)
			}
		}
	})
}
