package kernel

import (
	"errors"

	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/engine/search"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// searcher is the session's search engine, with the rg found once at New.
func (k *Kernel) searcher(c *route.Call) *search.Searcher {
	return &search.Searcher{Scope: c.Session.Scope(), RG: k.rg, Limits: k.searchLimits}
}

// searchFailure maps search errors that are not regex errors.
func (k *Kernel) searchFailure(c *route.Call, path string, err error) *transport.Error {
	display := c.Session.Scope().Display(path)
	if sandbox.Code(err) != "" {
		return pathFailure(display, err)
	}
	e := &transport.Error{Code: transport.CodeInvalidParameter, Detail: err.Error(), Retryable: true, Action: fault.ActionCorrectRequest}
	switch {
	case errors.Is(err, search.ErrEmptyPattern):
		e.Code = transport.CodeMissingParameter
	case errors.Is(err, search.ErrMultiline):
		e.Hint = "search one line at a time; ~n in the text makes a line break"
	case errors.Is(err, search.ErrBadGlob):
		e.Hint = "include= takes globs such as *.ts or src/**/*.go"
	case errors.Is(err, search.ErrNotDirectory):
		e.Code, e.Detail = CodeNotADirectory, "path="+display+": find searches a directory"
		e.Hint = "give a directory, or use /t for one file"
	case errors.Is(err, search.ErrFileTooLarge), errors.Is(err, search.ErrNotSearchable):
		e.Code, e.Detail, e.Retryable, e.Action = CodeNotAFile, "path="+display+": "+err.Error(), false, ""
	default:
		e.Code, e.Detail, e.Retryable, e.Action = CodeReadFailed, "the search failed", false, ""
	}
	return e
}
