package stitchslop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Call outcomes that are not a page reply.
var (
	// ErrNoPage: no page is attached.
	ErrNoPage   = errors.New("no Stitch Slop tab is connected")
	errPageGone = errors.New("the page disconnected while the command was pending")
	errTimeout  = errors.New("the page did not answer in time")
)

type callResult struct {
	data []byte
	err  error
}

// pendingCall is one command waiting for the page's reply. Whoever takes
// it from its page's table (the reply, or the page's end) sets res once
// and then signals done; the caller reads res after done.
type pendingCall struct {
	res  callResult
	done chan struct{} // buffered 1
}

func newPendingCall() *pendingCall { return &pendingCall{done: make(chan struct{}, 1)} }

func (pc *pendingCall) reply(b []byte) { pc.res.data = b; pc.done <- struct{}{} }
func (pc *pendingCall) fail(err error) { pc.res.err = err; pc.done <- struct{}{} }

// Call sends {id, command, args} to the page at once and returns the
// page's reply envelope verbatim. When no page is attached it returns ErrNoPage. A reply
// that never comes (CallTimeout) or a page that goes away mid-call yields an
// ok:false envelope saying the command may or may not have run.
func (r *run) Call(ctx context.Context, command string, args json.RawMessage) ([]byte, error) {
	return r.call(ctx, agentFrom(ctx), command, args)
}

// call is Call for agent.
func (r *run) call(ctx context.Context, agent, command string, args json.RawMessage) ([]byte, error) {
	if command == "" || len(command) > 256 {
		return nil, fmt.Errorf("command must be 1..256 characters")
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	} else if !isJSONObject(args) {
		return nil, fmt.Errorf("args must be a JSON object")
	} else if !utf8.Valid(args) {
		// encoding/json takes invalid bytes; the page's browser closes a
		// text frame holding them (1007), dropping the tab mid-call
		return nil, fmt.Errorf("args must be valid UTF-8")
	}
	// Every command goes to the tab at once, under its own id and with its
	// own deadline (§2.5 matches replies by id): one the tab never answers
	// costs its own caller the timeout and holds up no other, and a long
	// poll (voice.listen) runs beside the rest.
	if r.isStopping() {
		return notSent(command, "the bridge is stopping"), nil
	}
	p := r.currentPage()
	if p == nil {
		return nil, ErrNoPage
	}
	id, pc, ok := p.register()
	if !ok {
		return nil, ErrNoPage // it left before the command was sent
	}
	defer r.agents.end(r.agents.begin(agent))
	timeout := time.Duration(r.s.callTimeout.Load())

	if err := p.write(appendCallFrame(make([]byte, 0, 40+len(command)+len(args)), id, command, args)); err != nil {
		p.forget(id)
		return uncertain(command, "the command could not be sent to the page ("+err.Error()+")"), nil
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-pc.done:
		res := pc.res
		if res.err != nil {
			if r.isStopping() {
				// The stop closed the page before this select saw ctx end.
				return uncertain(command, "the bridge stopped before it came"), nil
			}
			return uncertain(command, res.err.Error()), nil
		}
		return res.data, nil
	case <-t.C:
		p.forget(id)
		r.log.Warn("page call timed out", "command", clip(command, 64), "after", timeout)
		return uncertain(command, fmt.Sprintf("%s (%s)", errTimeout, timeout)), nil
	case <-ctx.Done():
		p.forget(id)
		if r.isStopping() {
			return uncertain(command, "the bridge stopped before it came"), nil
		}
		return uncertain(command, "the caller gave up: "+ctx.Err().Error()), nil
	}
}

// notSent is the ok:false envelope for a call that never reached the tab,
// so retrying it is safe.
func notSent(command, why string) []byte {
	b, _ := json.Marshal(map[string]any{
		"ok":      false,
		"error":   "stopping",
		"message": fmt.Sprintf("%s: the command %q was not sent to the Stitch Slop tab; retry it once a bridge runs.", why, clip(command, 64)),
	})
	return b
}

// uncertain is the ok:false envelope for a call whose fate is unknown.
func uncertain(command, why string) []byte {
	b, _ := json.Marshal(map[string]any{
		"ok":    false,
		"error": "uncertain",
		"message": fmt.Sprintf("%s: %s. The command %q may or may not have run; describe the scene (scene.describe) before retrying.",
			"No answer from the Stitch Slop tab", why, clip(command, 64)),
	})
	return b
}
