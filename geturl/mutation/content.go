package mutation

import (
	"errors"
	"strings"

	"github.com/hubdev/hub/geturl/engine/filechange"
	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/engine/staging"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// content returns a text that may come by one of several transports (the
// route's spec has already made sure exactly one is present): a staged
// blob (blobParam, with its optional countParam), a text parameter, or
// the raw= tail.
func content(c *route.Call, st *State, blobParam, countParam string, names ...string) (string, *transport.Error) {
	if blobParam != "" && c.Args.Has(blobParam) {
		text, f := st.Staging.Assemble(c.Args.Text(blobParam), c.Args.IntOr(countParam, 0))
		return text, transport.ErrorOf(f)
	}
	_, v, _ := c.Args.Content(names...)
	return v, nil
}

// blobParam declares a staged blob reference (blob=, oldBlob=, ...).
func blobParam(name string) transport.Param {
	return transport.Param{Name: name, MaxLen: 64, Check: staging.CheckName}
}

func required(p transport.Param) transport.Param {
	p.Required = true
	return p
}

// countParam declares a blob's expected chunk count.
func countParam(name string) transport.Param {
	return transport.Param{Name: name, Kind: transport.Int, Min: 1, Max: staging.MaxChunks}
}

// allowOf is what a session's file mutations may change beyond the
// project's own files: configuration that tools run on their own only
// with the terminal, since changing it is running commands. Every file
// mutation gets its sandbox.Allow here, before it becomes an intent
// (resolvePath) and when the engine runs it (Host.engine).
func allowOf(p route.Permissions) sandbox.Allow {
	return sandbox.Allow{Autorun: p.Terminal}
}

// resolvePath approves an agent path for a mutation by session s and
// returns its /project spelling, which both the intent's identity and the
// engine use (so a/b, ./a/b and /project/a/b are one intent). A path the
// sandbox refuses never becomes an intent.
func resolvePath(s route.Session, p string) (string, *transport.Error) {
	sc := s.Scope()
	if strings.HasSuffix(p, "/") && len(p) > 1 {
		return "", &transport.Error{Code: "invalid_path", Detail: "a path ending in / names a directory: " + sc.Display(p),
			Hint: "name the file", Retryable: true, Action: fault.ActionCorrectRequest}
	}
	r, err := sc.ResolveMutable(p, allowOf(s.Permissions()))
	if err != nil {
		return "", pathRefusal(sc, p, err)
	}
	return r.Virtual, nil
}

// pathRefusal reports a path the sandbox refused, naming it only as the
// sandbox displays it (never a host path).
func pathRefusal(sc *sandbox.Scope, p string, err error) *transport.Error {
	code := sandbox.Code(err)
	if code == "" {
		code = "invalid_path"
	}
	e := &transport.Error{Code: code, Detail: err.Error() + ": " + sc.Display(p), Retryable: true, Action: fault.ActionCorrectRequest}
	switch {
	case errors.Is(err, sandbox.ErrOutsideScope):
		e.Hint = "mutations stay inside /project: name a path relative to /project, starting with /project/, or a native absolute path inside the project; symlinks may not lead out"
		e.Retryable, e.Action = false, ""
	case errors.Is(err, sandbox.ErrVCSMetadata):
		e.Hint, e.Retryable, e.Action = filechange.VCSHint, false, ""
	case errors.Is(err, sandbox.ErrAutorunConfig):
		e.Hint, e.Retryable, e.Action = filechange.AutorunHint, false, ""
	}
	return e.With("path", sc.Display(p))
}

// Tool names of the journal (and of the route table).
const (
	toolWrite    = "write"
	toolEdit     = "edit"
	toolPatch    = "apply_patch"
	toolTerminal = "terminal"
)

// CodeToolNotPermitted refuses a mutation the session's project does not
// allow (file tools need write, the terminal needs terminal).
const CodeToolNotPermitted = "tool_not_permitted"

// CodeMutationsUnavailable: the session has no mutation state (a kernel
// wired without the mutation kernel).
const CodeMutationsUnavailable = "mutations_unavailable"

// prepare checks the session's permission for a tool and returns its
// mutation state; a refusal here comes before any intent exists.
func prepare(c *route.Call, need string) (*State, *transport.Error) {
	p := c.Session.Permissions()
	allowed := p.Mutations()
	switch need {
	case "write":
		allowed = p.Write
	case "terminal":
		allowed = p.Terminal
	}
	if !allowed {
		return nil, &transport.Error{Code: CodeToolNotPermitted,
			Detail: c.Route.Path + " (" + c.Route.Tool + ") needs the project's " + need + " permission, which this session does not have",
			Hint:   "the operator grants it per project on the control plane; Init lists the tools this session may use"}
	}
	st, ok := StateOf(c.Session)
	if !ok {
		return nil, &transport.Error{Code: CodeMutationsUnavailable, Detail: "this session generation has no mutation state"}
	}
	return st, nil
}
