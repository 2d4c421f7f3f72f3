package transport

import (
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/fault"
)

const base = "https://t.example/v0/AbCd1234"

// Specs shaped like real routes, so the table reads like agent traffic.
var (
	readSpec = &Spec{
		Route: "/r",
		Params: []Param{
			{Name: "path", Aliases: []string{"file"}, Repeat: 8, Required: true},
			{Name: "start", Kind: Int, Min: 1, Max: 1 << 30},
			{Name: "end", Kind: Int, Min: 1, Max: 1 << 30},
			{Name: "lines", Kind: Int, Min: 1, Max: 100000},
		},
		Groups: []Group{{Names: []string{"end", "lines"}, Code: CodeAmbiguousRange}},
	}
	grepSpec = &Spec{
		Route: "/g",
		Params: []Param{
			{Name: "path"},
			{Name: "pattern", Aliases: []string{"grep", "query"}},
			{Name: "include", Repeat: 8},
			{Name: "regex", Kind: Bool},
			{Name: "mode", Kind: Enum, Values: []string{"files", "lines"}},
		},
		Raw:    true,
		Groups: []Group{{Names: []string{"pattern", "raw"}, Code: CodeConflictingContent, Required: true}},
	}
	termSpec = &Spec{
		Route: "/x",
		Params: []Param{
			WaitParam(), RunParam(), CallParam(),
			{Name: "bg", Kind: Bool},
			{Name: "cwd"},
			{Name: "blob", MaxLen: 64},
			{Name: "count", Kind: Int, Min: 1, Max: 64},
			{Name: "command"},
		},
		Raw:      true,
		Groups:   []Group{{Names: []string{"raw", "blob", "command"}, Code: CodeConflictingContent, Required: true}, {Names: []string{"call", "run"}}},
		Requires: [][2]string{{"count", "blob"}},
	}
	writeSpec = &Spec{
		Route:  "/w",
		Params: []Param{{Name: "path", Aliases: []string{"file"}, Required: true}, WaitParam(), RunParam(), CallParam()},
		Raw:    true,
		Groups: []Group{{Names: []string{"raw"}, Required: true}},
	}
	noParams = &Spec{Route: "/k2"}
)

func bind(t *testing.T, s *Spec, query string) (*Args, *Error) {
	t.Helper()
	tg, err := ParseTarget(s.Route + "?" + query)
	if err != nil {
		return nil, err
	}
	return Bind(tg, s, base)
}

func TestBindAccepts(t *testing.T) {
	a, err := bind(t, readSpec, "path=src/a.ts&path=b%20c.ts&start=10&end=20")
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Texts("path"); len(got) != 2 || got[0] != "src/a.ts" || got[1] != "b c.ts" {
		t.Fatalf("paths %q", got)
	}
	if n, ok := a.Int("start"); !ok || n != 10 {
		t.Fatalf("start %d %v", n, ok)
	}
	if a.Has("lines") || a.Has("raw") {
		t.Fatal("absent params reported present")
	}

	var order []string
	a.Each(func(n, v string) { order = append(order, n+"="+v) })
	if strings.Join(order, "&") != "path=src/a.ts&path=b c.ts&start=10&end=20" {
		t.Fatalf("order %q", order)
	}

	a, err = bind(t, readSpec, "file=~u00E9t~h1.md")
	if err != nil || a.Text("path") != "ét#1.md" {
		t.Fatalf("alias: %v %q", err, a.Text("path"))
	}

	a, err = bind(t, grepSpec, "path=src&include=*.ts&regex=0&raw=foo\\s~qbar&x=1")
	if err != nil {
		t.Fatal(err)
	}
	if raw, ok := a.Raw(); !ok || raw != `foo\s+bar&x=1` {
		t.Fatalf("raw %q", raw)
	}
	if v, given := a.Bool("regex"); v || !given {
		t.Fatal("regex=0")
	}
	if n, v, ok := a.Content("pattern", "raw"); !ok || n != "raw" || v != `foo\s+bar&x=1` {
		t.Fatal("content")
	}

	a, err = bind(t, termSpec, "wait=1000&raw=python+--version")
	if err != nil || a.IntOr("wait", 0) != 1000 {
		t.Fatal(err)
	}
	if raw, _ := a.Raw(); raw != "python --version" {
		t.Fatalf("raw %q", raw)
	}
	// a ~a keeps a control-looking & as content
	a, err = bind(t, termSpec, "raw=echo~await=1000")
	if raw, _ := a.Raw(); err != nil || raw != "echo&wait=1000" {
		t.Fatalf("~a: %v %q", err, raw)
	}
	// so does %26: it was deliberately escaped too
	a, err = bind(t, termSpec, "raw=echo%26wait=1000")
	if raw, _ := a.Raw(); err != nil || raw != "echo&wait=1000" {
		t.Fatalf("%%26: %v %q", err, raw)
	}
	// an & followed by something that is not a control name is content
	a, err = bind(t, termSpec, "raw=a&&b&x=1&wait")
	if raw, _ := a.Raw(); err != nil || raw != "a&&b&x=1&wait" {
		t.Fatalf("content &: %v %q", err, raw)
	}
	// empty raw is content (an empty file, say)
	a, err = bind(t, termSpec, "raw=")
	if raw, ok := a.Raw(); err != nil || !ok || raw != "" {
		t.Fatal("empty raw")
	}
	// doubled and trailing & are ignored
	if _, err := bind(t, readSpec, "&&path=a&"); err != nil {
		t.Fatal(err)
	}
}

func TestBindRefuses(t *testing.T) {
	for _, c := range []struct {
		name   string
		spec   *Spec
		query  string
		code   string
		repair string // the query of the repair URL; "" means none
	}{
		{"unknown with typo", readSpec, "pth=a", CodeUnknownParameter, "path=a"},
		{"typo by transposition", termSpec, "wiat=100&raw=ls", CodeUnknownParameter, "wait=100&raw=ls"},
		{"typo by case", readSpec, "Path=a", CodeUnknownParameter, "path=a"},
		{"unknown, nothing close", readSpec, "path=a&colour=red", CodeUnknownParameter, ""},
		{"ambiguous typo", grepSpec, "moda=x&raw=a", CodeUnknownParameter, ""},
		{"typo keeps the agent's encoding", readSpec, "fiel=a%20b~nc", CodeUnknownParameter, "file=a%20b~nc"},
		{"raw on a route without raw", readSpec, "path=a&raw=x", CodeUnknownParameter, ""},
		{"bare raw", grepSpec, "pattern=a&raw", CodeInvalidParameter, ""},
		{"missing required", readSpec, "start=1", CodeMissingParameter, ""},
		{"empty placeholder dropped", readSpec, "path=a&start=", CodeEmptyParameter, "path=a"},
		{"bare key dropped", readSpec, "path=a&start", CodeEmptyParameter, "path=a"},
		// A bare flag means "on" to many command lines: dropping it (bg off,
		// regex off) would invert it, so it is a boolean without its value.
		{"bare boolean is not dropped", termSpec, "bg&raw=npm+run+dev", CodeInvalidParameter, ""},
		{"bare regex is not dropped", grepSpec, "regex&raw=a.b", CodeInvalidParameter, ""},
		{"empty boolean placeholder dropped", termSpec, "bg=&raw=ls", CodeEmptyParameter, "raw=ls"},
		{"empty required is not repaired", readSpec, "path=", CodeEmptyParameter, ""},
		{"not an integer", readSpec, "path=a&start=ten", CodeInvalidParameter, ""},
		{"int with plus sign is a space", readSpec, "path=a&start=+5", CodeInvalidParameter, ""},
		{"int out of range, no clamp", readSpec, "path=a&start=0", CodeValueOutOfRange, ""},
		{"wait clamped high", termSpec, "wait=5000&raw=ls", CodeValueOutOfRange, "wait=1500&raw=ls"},
		{"wait clamped low", termSpec, "wait=-1&raw=ls", CodeValueOutOfRange, "wait=0&raw=ls"},
		{"wait huge", termSpec, "wait=99999999999999999999999&raw=ls", CodeValueOutOfRange, "wait=1500&raw=ls"},
		{"wait malformed", termSpec, "wait=1s&raw=ls", CodeInvalidParameter, ""},
		{"bool malformed", grepSpec, "regex=yes&raw=a", CodeInvalidParameter, ""},
		{"bool case", grepSpec, "regex=FALSE&raw=a", CodeInvalidParameter, "regex=false&raw=a"},
		{"enum", grepSpec, "mode=words&raw=a", CodeInvalidParameter, ""},
		{"enum case", grepSpec, "mode=Files&raw=a", CodeInvalidParameter, "mode=files&raw=a"},
		{"check", termSpec, "run=a%20b&raw=ls", CodeInvalidParameter, ""},
		{"too many paths", readSpec, strings.Repeat("path=a&", 9), CodeTooManyValues, ""},
		{"mixed alias spellings, repeatable", readSpec, "path=a&file=b", CodeConflictingParams, "path=a&path=b"},
		{"mixed alias spellings, same value", grepSpec, "grep=a&query=a", CodeConflictingParams, "grep=a"},
		{"mixed alias spellings, different", grepSpec, "grep=a&query=b", CodeConflictingParams, ""},
		{"duplicate same value", grepSpec, "path=src&path=src&raw=a", CodeDuplicateParameter, "path=src&raw=a"},
		{"duplicate equal after decoding", grepSpec, "path=a+b&path=a%20b&raw=x", CodeDuplicateParameter, "path=a+b&raw=x"},
		{"duplicate different", grepSpec, "path=src&path=lib&raw=a", CodeConflictingParams, ""},
		{"ambiguous range", readSpec, "path=a&end=5&lines=3", CodeAmbiguousRange, ""},
		{"content transports", grepSpec, "pattern=a&raw=b", CodeConflictingContent, ""},
		{"content transports three", termSpec, "blob=x&command=ls&raw=ls", CodeConflictingContent, ""},
		{"no content", termSpec, "wait=10", CodeMissingParameter, ""},
		{"requires", termSpec, "count=3&raw=ls", CodeMissingParameter, ""},
		{"call with run", termSpec, "call=a&run=2&raw=ls", CodeConflictingParams, ""},
		{"misplaced wait", termSpec, "raw=npm+test&wait=1000", CodeMisplacedControl, "wait=1000&raw=npm+test"},
		{"misplaced several", termSpec, "bg=1&raw=npm+run+dev&wait=1000&run=2", CodeMisplacedControl, "bg=1&wait=1000&run=2&raw=npm+run+dev"},
		{"misplaced and clamped", termSpec, "raw=ls&wait=9000", CodeMisplacedControl, "wait=1500&raw=ls"},
		{"misplaced route param", grepSpec, "path=src&raw=TODO&include=*.ts", CodeMisplacedControl, "path=src&include=*.ts&raw=TODO"},
		{"misplaced global control on a route without it", grepSpec, "raw=TODO&wait=10", CodeMisplacedControl, ""},
		{"misplaced then content: not deterministic", termSpec, "raw=a&wait=1&b", CodeMisplacedControl, ""},
		{"misplaced duplicate", termSpec, "wait=10&raw=a&wait=20", CodeMisplacedControl, ""},
		// A required parameter written after raw= is misplaced, not missing:
		// moving it is the whole correction.
		{"misplaced required", writeSpec, "raw=hello&path=a.txt", CodeMisplacedControl, "path=a.txt&raw=hello"},
		{"misplaced required and wait", writeSpec, "raw=hello&path=a.txt&wait=1000", CodeMisplacedControl, "path=a.txt&wait=1000&raw=hello"},
		{"two problems, both fixable", termSpec, "wiat=10&bg=TRUE&raw=ls", CodeUnknownParameter, "wait=10&bg=true&raw=ls"},
		{"two problems, one not fixable", termSpec, "wiat=10&bg=yes&raw=ls", CodeUnknownParameter, ""},
		{"no params route", noParams, "x=1", CodeUnknownParameter, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := bind(t, c.spec, c.query)
			if err == nil {
				t.Fatal("accepted")
			}
			if err.Code != c.code {
				t.Errorf("code %s (%s), want %s", err.Code, err.Detail, c.code)
			}
			want := ""
			if c.repair != "" {
				want = base + c.spec.Route + "?" + c.repair
			}
			if err.Repair != want {
				t.Errorf("repair %q, want %q", err.Repair, want)
			}
			if !err.Retryable || err.Detail == "" || err.Action == "" {
				t.Errorf("incomplete error %+v", err)
			}
			if (err.Repair != "") != (err.Action == fault.ActionFetchRepair) {
				t.Errorf("action %s with repair %q", err.Action, err.Repair)
			}
		})
	}
}

func TestRepairIsExactlyRebindable(t *testing.T) {
	_, err := bind(t, termSpec, "raw=echo+a~nb&wait=9000&run=2")
	if err == nil || err.Repair == "" {
		t.Fatalf("no repair: %v", err)
	}
	tg, perr := ParseTarget(strings.TrimPrefix(err.Repair, base))
	if perr != nil {
		t.Fatal(perr)
	}
	a, berr := Bind(tg, termSpec, base)
	if berr != nil {
		t.Fatal(berr)
	}
	if raw, _ := a.Raw(); raw != "echo a\nb" || a.IntOr("wait", 0) != 1500 || a.Text("run") != "2" {
		t.Fatalf("repaired args: raw %q wait %d run %q", raw, a.IntOr("wait", 0), a.Text("run"))
	}
}

func TestLimits(t *testing.T) {
	long := "/x?raw=" + strings.Repeat("a", MaxTarget)
	if _, err := ParseTarget(long); err == nil || err.Code != CodeRequestTooLarge || err.Action != fault.ActionStageContent {
		t.Fatalf("target: %v", err)
	}
	if _, err := ParseTarget("/x?raw=" + strings.Repeat("a", MaxRaw+1)); err == nil || err.Code != CodeRawTooLarge {
		t.Fatalf("raw: %v", err)
	}
	if _, err := bind(t, termSpec, "raw="+strings.Repeat("a", MaxRaw)); err != nil {
		t.Fatalf("raw at the limit: %v", err)
	}
	if _, err := ParseTarget("x?y"); err == nil || err.Code != CodeMalformedRequest {
		t.Fatalf("relative: %v", err)
	}
}

func TestParseTarget(t *testing.T) {
	for _, c := range []struct {
		in, path string
		pairs    []Pair
		hasRaw   bool
		tail     string
	}{
		{"/v0/tok/r", "/v0/tok/r", nil, false, ""},
		{"/v0/tok/r?", "/v0/tok/r", nil, false, ""},
		{"/r?a=1&b&c=", "/r", []Pair{{"a", "1", true}, {"b", "", false}, {"c", "", true}}, false, ""},
		{"/r?a=b=c", "/r", []Pair{{"a", "b=c", true}}, false, ""},
		{"/r?raw=x&y=1", "/r", nil, true, "x&y=1"},
		{"/r?a=1&raw=?raw=&raw=", "/r", []Pair{{"a", "1", true}}, true, "?raw=&raw="},
		{"/r?xraw=1&raw=2", "/r", []Pair{{"xraw", "1", true}}, true, "2"},
		{"/r?a=%26raw=1", "/r", []Pair{{"a", "%26raw=1", true}}, false, ""},
		{"http://h:1/v0/t/r?a=1", "/v0/t/r", []Pair{{"a", "1", true}}, false, ""},
		{"HTTPS://h?raw=1", "/", nil, true, "1"},
		{"http://h", "/", nil, false, ""},
	} {
		tg, err := ParseTarget(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if tg.Path != c.path || tg.HasRaw != c.hasRaw || tg.Tail != c.tail || len(tg.Pairs) != len(c.pairs) {
			t.Fatalf("%s: %+v", c.in, tg)
		}
		for i := range c.pairs {
			if tg.Pairs[i] != c.pairs[i] {
				t.Fatalf("%s: pair %d %+v", c.in, i, tg.Pairs[i])
			}
		}
	}
}

func TestTypoDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{
		{"wait", "wait", 0}, {"wiat", "wait", 1}, {"pth", "path", 1}, {"paths", "path", 1},
		{"", "abc", 3}, {"include", "inclde", 1}, {"ca", "abc", 3},
	} {
		if got := distance(c.a, c.b); got != c.d {
			t.Errorf("distance(%q,%q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

// TestRepairPassesValidate: a repair URL is offered only when the corrected
// request passes the route's own Validate too, not just the parameter
// grammar — a repair that the route then refuses is no repair.
func TestRepairPassesValidate(t *testing.T) {
	s := &Spec{
		Route:  "/v",
		Params: []Param{{Name: "start", Kind: Int, Min: 1, Max: 100, Repeat: 8}, {Name: "bg", Kind: Bool}},
		Validate: func(a *Args) *Error {
			if len(a.Texts("start")) > 1 {
				return &Error{Code: CodeConflictingParams, Detail: "start given twice", Hint: "give start once"}
			}
			return nil
		},
	}
	_, err := bind(t, s, "start=1&strt=2")
	if err == nil || err.Code != CodeUnknownParameter || err.Repair != "" || err.Action != fault.ActionCorrectRequest {
		t.Fatalf("typo whose repair Validate refuses: %+v", err)
	}
	_, err = bind(t, s, "start=1&start=2")
	if err == nil || err.Code != CodeConflictingParams || err.Hint != "give start once" || !err.Retryable {
		t.Fatalf("Validate's refusal: %+v", err)
	}
	_, err = bind(t, s, "strt=2")
	if err == nil || err.Repair != base+"/v?start=2" {
		t.Fatalf("a repair Validate accepts: %+v", err)
	}
}
