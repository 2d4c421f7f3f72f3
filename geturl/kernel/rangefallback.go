package kernel

import (
	"context"
	"errors"
	"strconv"

	"github.com/hubdev/hub/geturl/engine/replay"
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

// rangeSpec is /z: which response (id= or last=1) and which piece of it
// (part=N, the default part=0, or offset= with length=).
var rangeSpec = &transport.Spec{
	Route: "/z",
	Params: []transport.Param{
		{Name: "id", MaxLen: 64},
		{Name: "last", Kind: transport.Enum, Values: []string{"1", "true"}},
		{Name: "part", Kind: transport.Int, Min: 0, Max: replay.MaxBytes / replay.PartSize},
		{Name: "offset", Kind: transport.Int, Min: 0, Max: replay.MaxBytes},
		{Name: "length", Kind: transport.Int, Min: 1, Max: replay.MaxRangeLength, Clamp: true},
	},
	Groups: []transport.Group{
		{Names: []string{"id", "last"}, Required: true},
		{Names: []string{"part", "offset"}, Code: transport.CodeAmbiguousRange},
	},
	Requires: [][2]string{{"offset", "length"}, {"length", "offset"}},
}

// rangeFallback answers /z with one plain-text piece of a stored response.
// It never runs anything again and never becomes the "last" response, not
// even when it answers an error (see Call.StoresAnswer): one mistyped
// recovery URL must not lose what last=1 recovers. A response the
// mutation base answered is refused on the read base (route.WrongBase:
// the agent is sent to bases.m without this answer naming it).
func (k *Kernel) rangeFallback(_ context.Context, c *route.Call) (any, *transport.Error) {
	store := c.Session.Replay()
	at := c.Level()
	id := c.Args.Text("id")
	if c.Args.Has("last") {
		last, err := store.Last(at)
		switch {
		case errors.Is(err, replay.ErrAbove):
			return nil, k.aboveLevel(c, "the last response was answered on the mutation base")
		case err != nil:
			return nil, &transport.Error{Code: CodeUnknownResponse, Detail: "no response stored yet",
				Hint: "responses are kept 15 minutes after their last use, and not across capability rotation"}
		}
		id = last
	}
	var (
		r    replay.Range
		err  error
		next transport.Query
	)
	next.Add("id", id)
	if off, ok := c.Args.Int("offset"); ok {
		length, _ := c.Args.Int("length")
		r, err = store.Range(id, off, length, at)
		next.Add("offset", strconv.Itoa(r.NextOffset)).Add("length", strconv.Itoa(length))
	} else {
		r, err = store.Part(id, c.Args.IntOr("part", 0), at)
		next.Add("part", strconv.Itoa(r.NextPart))
	}
	switch {
	case errors.Is(err, replay.ErrNotFound):
		return nil, &transport.Error{Code: CodeUnknownResponse, Detail: "id=" + id,
			Hint: "responses are kept 15 minutes after their last use, and not across capability rotation"}
	case errors.Is(err, replay.ErrAbove):
		return nil, k.aboveLevel(c, "response "+id+" was answered on the mutation base")
	case err != nil:
		return nil, &transport.Error{Code: CodeRangeOutOfBounds, Detail: err.Error(), Retryable: true,
			Hint: "start again from " + c.URL("/z", new(transport.Query).Add("id", id).Add("part", "0")), Action: fault.ActionCorrectRequest}
	}
	return route.PlainText(r.Render(c.URL("/z", &next))), nil
}

// aboveLevel refuses, on the read base, a /z of a response the mutation
// base answered: the same request belongs on bases.m.
func (k *Kernel) aboveLevel(c *route.Call, detail string) *transport.Error {
	suffix := c.Route.Path
	if c.Target != nil {
		suffix = c.Target.Rewrite(c.Route.Path, nil, "")
	}
	return route.WrongBase(c, detail, suffix)
}
