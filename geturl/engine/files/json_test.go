package files

import (
	"reflect"
	"testing"

	"github.com/hubdev/hub/hub/jsonw"
)

// reference is encoding/json with HTML escaping off (transport.Marshal).
func reference(t testing.TB, v any) string {
	b, err := jsonw.Reflect(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fill sets every field reflection can reach to a value that is not empty,
// so a field added to FileResult, Entry or PathError shows up in the
// reference encoding and the hand-written one must learn it.
func fill(v reflect.Value, s string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Int, reflect.Int64:
		v.SetInt(-7)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), s)
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), s)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), s)
		}
	default:
		panic("fill: unhandled kind " + v.Kind().String())
	}
}

func TestFileResultJSONMatchesEncodingJSON(t *testing.T) {
	var all FileResult
	fill(reflect.ValueOf(&all).Elem(), "a<b>&\"c\"\n\t\u2028é😀\xff")
	cases := []FileResult{
		{}, all,
		{Path: "/project/a.ts", Kind: KindFile, Content: "line\n", StartLine: 1, EndLine: 1, TotalLines: 1, Size: 5, Fingerprint: "0123456789abcdef", Complete: true},
		{Path: "/project/big", Kind: KindFile, Content: "x", Truncated: true, NextStartLine: 2, ClippedLine: true, InvalidUTF8: true, TotalLines: -1},
		{Path: "/project/bin", Kind: KindFile, Binary: true, Complete: true},
		{Path: "/project", Kind: KindDir, Entries: []Entry{{Name: "a", Kind: KindFile, Size: 3}, {Name: "d", Kind: KindDir}}, DirPartial: true},
		{Path: "/project", Kind: KindDir, Entries: []Entry{}},
		{Path: "../x", Error: &PathError{Code: "path_traversal", Message: "path climbs above the project root"}},
	}
	for _, c := range cases {
		if got, want := string(c.AppendJSON(nil)), reference(t, c); got != want {
			t.Errorf("AppendJSON\n got  %s\n want %s", got, want)
		}
	}
	for _, fs := range [][]FileResult{nil, {}, cases} {
		if got, want := string(AppendFilesJSON([]byte("x"), fs)), "x"+reference(t, fs); got != want {
			t.Errorf("AppendFilesJSON\n got  %s\n want %s", got, want)
		}
	}
}

func FuzzFileResultJSON(f *testing.F) {
	f.Add("/project/a.ts", "const a = \"<b>\" & 1;\n", "0123456789abcdef", 3, int64(12), true, "x")
	f.Add("\xff\u2028", "\x00\x1f\\", "", -1, int64(-1), false, "")
	f.Fuzz(func(t *testing.T, path, content, fp string, n int, size int64, flag bool, name string) {
		r := FileResult{Path: path, Kind: name, Content: content, StartLine: n, EndLine: n + 1, TotalLines: -n, Size: size,
			Fingerprint: fp, Complete: flag, Truncated: !flag, NextStartLine: n, ClippedLine: flag, Binary: !flag, InvalidUTF8: flag,
			DirPartial: !flag}
		if name != "" {
			r.Entries = []Entry{{Name: name, Kind: content, Size: size}}
			r.Error = &PathError{Code: name, Message: content}
		}
		if got, want := string(r.AppendJSON(nil)), reference(t, r); got != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	})
}
