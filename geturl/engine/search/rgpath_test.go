package search

import "testing"

// rg prints paths with the OS's separator: on Windows ".\src\main.go"
// for a directory search, the argument as given for one file. They
// become the contract's slash-separated paths below the target, and
// nothing that leaves it survives, on either OS's reading.
func TestRGRel(t *testing.T) {
	cases := []struct {
		p, arg    string
		backslash bool
		rel       string
		ok        bool
	}{
		// Windows-shaped output.
		{`.\src\main.go`, ".", true, "src/main.go", true},
		{`.\main.go`, ".", true, "main.go", true},
		{`./src/main.go`, ".", true, "src/main.go", true}, // rg --path-separator /
		{`.\a\.\b\..\c.txt`, ".", true, "a/c.txt", true},
		{`.\日本語\x y.txt`, ".", true, "日本語/x y.txt", true},
		{`.\..\outside.txt`, ".", true, "", false},
		{`.\src\..\..\x`, ".", true, "", false},
		{`..\x`, ".", true, "", false},
		{`\x.txt`, ".", true, "", false},
		{`\\server\share\x.txt`, ".", true, "", false},
		{`\\?\C:\x.txt`, ".", true, "", false},
		{`C:\project\x.txt`, ".", true, "", false},
		{`C:x.txt`, ".", true, "", false},
		{`.\a.txt:secret`, ".", true, "", false}, // an alternate data stream
		{`.`, ".", true, "", false},
		{`.\`, ".", true, "", false},
		{`./main.go`, "./main.go", true, "", true},
		{`.\main.go`, "./main.go", true, "", true},
		{`.\other.go`, "./main.go", true, "", false},
		// Unix: '\' is a name's byte.
		{`./src/main.go`, ".", false, "src/main.go", true},
		{`./weird/a\b.txt`, ".", false, `weird/a\b.txt`, true},
		{`.\src\main.go`, ".", false, `.\src\main.go`, true},
		{`./a:b.txt`, ".", false, "a:b.txt", true},
		{`./../x`, ".", false, "", false},
		{`/etc/passwd`, ".", false, "", false},
		{`./main.go`, "./main.go", false, "", true},
		{`.\main.go`, "./main.go", false, "", false},
	}
	for _, tc := range cases {
		rel, ok := rgRel(tc.p, tc.arg, tc.backslash)
		if rel != tc.rel || ok != tc.ok {
			t.Errorf("rgRel(%q, %q, backslash %v) = %q, %v; want %q, %v", tc.p, tc.arg, tc.backslash, rel, ok, tc.rel, tc.ok)
		}
	}
}

// On Windows a glob with a backslash is left to the Go engine; elsewhere
// rg reads it as includeSet does (FuzzGlobAgree).
func TestRGReadsGlobs(t *testing.T) {
	cases := []struct {
		globs     []string
		backslash bool
		want      bool
	}{
		{nil, true, true},
		{[]string{"*.ts", "src/**/*.go"}, true, true},
		{[]string{"*.ts", `a\*b`}, true, false},
		{[]string{`src\*.go`}, true, false},
		{[]string{`a\*b`}, false, true},
	}
	for _, tc := range cases {
		if got := rgReadsGlobs(tc.globs, tc.backslash); got != tc.want {
			t.Errorf("rgReadsGlobs(%q, backslash %v) = %v, want %v", tc.globs, tc.backslash, got, tc.want)
		}
	}
}
