package kernel

import (
	"reflect"
	"testing"

	"github.com/hubdev/hub/geturl/engine/files"
)

// TestReadAnswerJSON holds readAnswer's hand-written encoder to the
// reflective one with every field set and with every slice nil (a field
// added to the struct but not to AppendJSON fails here).
func TestReadAnswerJSON(t *testing.T) {
	s := []string{"/project/a<b>&c", "\u2028\xff"}
	for _, a := range []*readAnswer{
		{}, nil,
		{OK: true, Truncated: true, Next: "https://h/v0/t/r?path=a&start=3", Hint: "fetch <next>", RequestedPaths: s, ReturnedPaths: s,
			AllComplete: true, CompletePaths: s, IncompletePaths: s, UnreturnedPaths: s,
			Files: []files.FileResult{{Path: "/project/a", Content: "x\n"}, {Path: "b", Error: &files.PathError{Code: "c", Message: "m"}}}},
		{RequestedPaths: []string{}, Files: []files.FileResult{}},
	} {
		got, err := a.AppendJSON([]byte("x"))
		if want := "x" + reflective(t, a); err != nil || string(got) != want {
			t.Errorf("AppendJSON\n got  %s\n want %s", got, want)
		}
	}
	if n := len(reflectFields(readAnswer{})); n != 11 {
		t.Fatalf("readAnswer has %d fields; teach AppendJSON and this test the new ones", n)
	}
}

func reflectFields(v any) []string {
	var names []string
	rt := reflect.TypeOf(v)
	for i := range rt.NumField() {
		names = append(names, rt.Field(i).Name)
	}
	return names
}
