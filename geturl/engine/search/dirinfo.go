package search

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"unicode/utf16"
)

// FILE_FULL_DIR_INFO, the records GetFileInformationByHandleEx
// (FileFullDirectoryInfo) fills a buffer with when Windows lists a
// directory through its handle: little-endian, each record starting at
// the previous one's NextEntryOffset (0 ends the buffer), the name
// UTF-16 and not terminated. Parsed here, not in walk_windows.go, so the
// tests run it on every OS.
const (
	dirInfoNext       = 0  // uint32 NextEntryOffset
	dirInfoEndOfFile  = 40 // int64 EndOfFile: the size
	dirInfoAttributes = 56 // uint32 FileAttributes
	dirInfoNameLength = 60 // uint32 FileNameLength, in bytes
	dirInfoName       = 68 // FileName: after EaSize (the reparse tag, unused)

	fileAttributeDevice       = 0x40
	fileAttributeDirectory    = 0x10
	fileAttributeReparsePoint = 0x400
)

var errDirInfo = errors.New("search: malformed directory listing")

// parseDirInfo appends the entries of one buffer of FILE_FULL_DIR_INFO
// records to ents, without "." and "..", each in dir. Every offset and
// length is checked against the buffer: a record that does not fit, a
// NextEntryOffset that does not move forward, an odd or empty name end
// the parse with errDirInfo (and the entries before it).
func parseDirInfo(buf []byte, dir dirHandle, ents []entry) ([]entry, error) {
	for off := 0; ; {
		if len(buf)-off < dirInfoName {
			return ents, errDirInfo
		}
		rec := buf[off:]
		next := int(binary.LittleEndian.Uint32(rec[dirInfoNext:]))
		n := int(binary.LittleEndian.Uint32(rec[dirInfoNameLength:]))
		if n == 0 || n%2 != 0 || n > len(rec)-dirInfoName || (next != 0 && (next < dirInfoName+n || next > len(rec))) {
			return ents, errDirInfo
		}
		u := make([]uint16, n/2)
		for i := range u {
			u[i] = binary.LittleEndian.Uint16(rec[dirInfoName+2*i:])
		}
		if name := string(utf16.Decode(u)); name != "." && name != ".." {
			size := int64(binary.LittleEndian.Uint64(rec[dirInfoEndOfFile:]))
			ents = append(ents, entry{name: name, mode: attributesMode(binary.LittleEndian.Uint32(rec[dirInfoAttributes:])), dir: dir, listed: max(size, -1)})
		}
		if next == 0 {
			return ents, nil
		}
		off += next
	}
}

// attributesMode is the type of a listed name from its FileAttributes:
// any reparse point (symlink, junction, mount point, and the placeholders
// of cloud and deduplicated files alike) is a symlink, which the walk
// reports and never follows, as the sandbox refuses to open any of them.
func attributesMode(attrs uint32) fs.FileMode {
	switch {
	case attrs&fileAttributeReparsePoint != 0:
		return fs.ModeSymlink
	case attrs&fileAttributeDirectory != 0:
		return fs.ModeDir
	case attrs&fileAttributeDevice != 0:
		return fs.ModeDevice
	}
	return 0
}
