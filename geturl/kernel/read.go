package kernel

import (
	"context"
	"errors"
	"strconv"

	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
	"github.com/hubdev/hub/hub/jsonw"
)

// maxLine bounds line numbers in a request (far beyond any file).
const maxLine = 1_000_000_000

// readSpec is /r: up to 8 path= (alias file=), each with an optional line
// range written after it: start=, and end= or lines= (a count); skip= (the
// bytes of line start= already shown) continues a clipped line, as next
// URLs do.
var readSpec = &transport.Spec{
	Route: "/r",
	Params: []transport.Param{
		{Name: "path", Aliases: []string{"file"}, Repeat: files.DefaultLimits.MaxPaths, Required: true},
		{Name: "start", Kind: transport.Int, Min: 1, Max: maxLine, Repeat: files.DefaultLimits.MaxPaths},
		{Name: "end", Kind: transport.Int, Min: 1, Max: maxLine, Repeat: files.DefaultLimits.MaxPaths},
		{Name: "lines", Kind: transport.Int, Min: 1, Max: maxLine, Repeat: files.DefaultLimits.MaxPaths},
		{Name: "skip", Kind: transport.Int, Min: 0, Max: maxLine, Repeat: files.DefaultLimits.MaxPaths},
	},
	// The pairing of ranges with paths is part of binding, so a repair
	// URL (a typo of start= fixed, say) never leads to a refused range.
	Validate: func(a *transport.Args) *transport.Error {
		_, terr := readTargets(a)
		return terr
	},
}

// readAnswer puts the summary before the files, so a reader that cuts the
// answer short still shows what came back and where to continue.
type readAnswer struct {
	OK              bool               `json:"ok"`
	Truncated       bool               `json:"truncated"`
	Next            string             `json:"next,omitempty"`
	Hint            string             `json:"hint,omitempty"`
	RequestedPaths  []string           `json:"requestedPaths"`
	ReturnedPaths   []string           `json:"returnedPaths"`
	AllComplete     bool               `json:"allComplete"`
	CompletePaths   []string           `json:"completePaths"`
	IncompletePaths []string           `json:"incompletePaths"`
	UnreturnedPaths []string           `json:"unreturnedPaths"`
	Files           []files.FileResult `json:"files"`
}

// AppendJSON appends the answer as encoding/json writes the struct (HTML
// escaping off), without reflection: /r is the hot route and its answer is
// mostly file content. The kernel tests compare the two on every answer.
func (a *readAnswer) AppendJSON(b []byte) ([]byte, error) {
	if a == nil {
		return append(b, "null"...), nil
	}
	b = append(b, `{"ok":`...)
	b = jsonw.Bool(b, a.OK)
	b = append(b, `,"truncated":`...)
	b = jsonw.Bool(b, a.Truncated)
	if a.Next != "" {
		b = append(b, `,"next":`...)
		b = jsonw.String(b, a.Next)
	}
	if a.Hint != "" {
		b = append(b, `,"hint":`...)
		b = jsonw.String(b, a.Hint)
	}
	b = append(b, `,"requestedPaths":`...)
	b = jsonw.Strings(b, a.RequestedPaths)
	b = append(b, `,"returnedPaths":`...)
	b = jsonw.Strings(b, a.ReturnedPaths)
	b = append(b, `,"allComplete":`...)
	b = jsonw.Bool(b, a.AllComplete)
	b = append(b, `,"completePaths":`...)
	b = jsonw.Strings(b, a.CompletePaths)
	b = append(b, `,"incompletePaths":`...)
	b = jsonw.Strings(b, a.IncompletePaths)
	b = append(b, `,"unreturnedPaths":`...)
	b = jsonw.Strings(b, a.UnreturnedPaths)
	b = append(b, `,"files":`...)
	b = files.AppendFilesJSON(b, a.Files)
	return append(b, '}'), nil
}

// read answers /r. What it returned is recorded as read coverage (not for
// HEAD, whose body nobody sees).
func (k *Kernel) read(_ context.Context, c *route.Call) (any, *transport.Error) {
	targets, terr := readTargets(c.Args)
	if terr != nil {
		return nil, terr
	}
	res, err := files.NewReader(c.Session.Scope()).Read(targets)
	if err != nil {
		code := transport.CodeInvalidParameter
		if errors.Is(err, files.ErrTooManyPaths) {
			code = transport.CodeTooManyValues
		}
		return nil, &transport.Error{Code: code, Detail: err.Error(), Retryable: true, Action: fault.ActionCorrectRequest}
	}
	if cov := c.Session.Coverage(); cov != nil && !c.Head {
		cov.Record(res)
	}
	a := &readAnswer{
		OK: true, RequestedPaths: res.RequestedPaths, ReturnedPaths: res.ReturnedPaths, AllComplete: res.AllComplete,
		CompletePaths: res.CompletePaths, IncompletePaths: res.IncompletePaths, UnreturnedPaths: res.UnreturnedPaths,
		Files: res.Files,
	}
	var next transport.Query
	for i, f := range res.Files {
		if !f.Truncated {
			continue
		}
		a.Truncated = true
		if f.NextStartLine <= 0 {
			continue
		}
		next.Add("path", f.Path).Add("start", strconv.Itoa(f.NextStartLine))
		if f.NextSkip > 0 {
			next.Add("skip", strconv.Itoa(f.NextSkip))
		}
		if targets[i].End > 0 {
			next.Add("end", strconv.Itoa(targets[i].End))
		}
	}
	if a.Truncated {
		if q := next.String(); q != "" {
			a.Next = c.URL("/r", &next)
		}
		a.Hint = "fetch next for the rest; for large source files /o maps declarations first"
	}
	return a, nil
}

// lineRange is one path's range parameters as written.
type lineRange struct {
	start, end, lines, skip int
	given                   uint8 // which were written (skip=0 is a value too)
}

// readTargets pairs each line-range parameter with the path= written before
// it (ranges written before the first path= belong to the first path), and
// refuses a path given the same range parameter twice or both end= and
// lines= (ambiguous).
func readTargets(args *transport.Args) ([]files.Target, *transport.Error) {
	n := len(args.Texts("path"))
	var (
		paths   = make([]string, 0, n)
		ranges  = make([]lineRange, 0, n)
		pending lineRange
		bad     *transport.Error
	)
	args.Each(func(name, v string) {
		if name == "path" {
			paths = append(paths, v)
			ranges = append(ranges, lineRange{})
			return
		}
		n, _ := strconv.Atoi(v)
		r := &pending
		if len(ranges) > 0 {
			r = &ranges[len(ranges)-1]
		}
		if bad == nil && !setRange(r, name, n) {
			bad = rangeConflict(name, len(paths))
		}
	})
	if bad != nil {
		return nil, bad
	}
	for _, name := range []string{"start", "end", "lines", "skip"} {
		if pending.has(name) && !setRange(&ranges[0], name, get(pending, name)) {
			return nil, rangeConflict(name, 1)
		}
	}
	targets := make([]files.Target, len(paths))
	for i, p := range paths {
		r := ranges[i]
		if r.end > 0 && r.lines > 0 {
			return nil, &transport.Error{Code: transport.CodeAmbiguousRange, Detail: "path #" + strconv.Itoa(i+1) + " has both end= and lines=",
				Hint: "give end= (last line) or lines= (a count), not both", Retryable: true, Action: fault.ActionCorrectRequest}
		}
		t := files.Target{Path: p, Start: r.start, End: r.end, Skip: r.skip}
		if r.lines > 0 {
			t.End = max(r.start, 1) + r.lines - 1
		}
		if t.End > 0 && t.Start > t.End {
			return nil, &transport.Error{Code: transport.CodeInvalidParameter,
				Detail:    "path #" + strconv.Itoa(i+1) + ": end=" + strconv.Itoa(t.End) + " is before start=" + strconv.Itoa(t.Start),
				Retryable: true, Action: fault.ActionCorrectRequest}
		}
		targets[i] = t
	}
	return targets, nil
}

func setRange(r *lineRange, name string, n int) bool {
	if r.has(name) {
		return false
	}
	r.given |= rangeBit(name)
	*r.field(name) = n
	return true
}

func (r *lineRange) has(name string) bool { return r.given&rangeBit(name) != 0 }

func rangeBit(name string) uint8 {
	switch name {
	case "start":
		return 1
	case "end":
		return 2
	case "lines":
		return 4
	}
	return 8 // skip
}

func get(r lineRange, name string) int { return *r.field(name) }

// field is the range parameter called name (a switch: a map literal here
// was built on every call).
func (r *lineRange) field(name string) *int {
	switch name {
	case "start":
		return &r.start
	case "end":
		return &r.end
	case "lines":
		return &r.lines
	case "skip":
		return &r.skip
	}
	panic("kernel: no line-range parameter " + name)
}

func rangeConflict(name string, pathNo int) *transport.Error {
	return &transport.Error{Code: transport.CodeConflictingParams,
		Detail:    name + "= given twice for path #" + strconv.Itoa(max(pathNo, 1)),
		Hint:      "a line range belongs to the path= written before it; give each path one range",
		Retryable: true, Action: fault.ActionCorrectRequest}
}
