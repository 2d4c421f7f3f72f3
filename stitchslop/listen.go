package stitchslop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/hubdev/hub/hub"
)

// The user's voice (issue 28): `hub stitchslop listen` long-polls the tab's
// voice.listen, as the app's own plugin does, and prints only what is worth
// waking an agent for, one JSON line each.
//
// What the tab answers is read so: an envelope with a non-empty `heard`
// string is an utterance (with `atMs` and `selection` passed on); `voice`
// ("on"/"off", or true/false) is whether the user's voice input is on; an
// ok:false with error no_page means no tab; unknown_command, unavailable or
// not_supported means this tab has no voice; any other ok:false (uncertain:
// the poll's own timeout, stopping, ...) is polled again after a pause.

const (
	// voiceListenMs is how long one voice.listen waits in the tab (the
	// plugin's 25 s); the bridge's 60 s call timeout is well beyond it.
	voiceListenMs = 25_000
	// listenRetry is the pause before polling again when there is no
	// bridge or no tab, or the tab answered an error.
	listenRetry = 2 * time.Second
	// listenPause is the pause after an answer with nothing heard, so a
	// tab answering at once cannot make the listener spin.
	listenPause = 250 * time.Millisecond
	// maxHeard bounds an utterance printed (characters).
	maxHeard = 10_000
	// maxSelection bounds the selection printed with one (bytes of JSON).
	maxSelection = 16 << 10
)

// errUnavailable: the tab has no voice.listen.
var errUnavailable = errors.New("the tab has no voice input")

// voiceEvent is one line listen prints.
type voiceEvent struct {
	// Type is heard, connected, disconnected, voice-on, voice-off or
	// unavailable.
	Type      string          `json:"type"`
	Heard     string          `json:"heard,omitempty"`
	AtMs      json.RawMessage `json:"atMs,omitempty"`
	Selection json.RawMessage `json:"selection,omitempty"`
	Message   string          `json:"message,omitempty"`
}

// voiceListener is listen's loop, with what it reaches passed in.
type voiceListener struct {
	// poll runs one voice.listen: the tab's envelope, or an error when no
	// bridge answered (gone, being replaced, not yet back).
	poll func(ctx context.Context) ([]byte, error)
	// emit prints one event.
	emit func(voiceEvent) error
	// sleep waits d, or until ctx ends (false).
	sleep func(ctx context.Context, d time.Duration) bool

	connected bool
	voice     string // "", "on", "off"
}

// run polls until ctx ends (nil), the tab has no voice (errUnavailable),
// or an event cannot be printed.
func (l *voiceListener) run(ctx context.Context) error {
	for ctx.Err() == nil {
		env, err := l.poll(ctx)
		if ctx.Err() != nil {
			return nil
		}
		pause := listenRetry
		if err != nil {
			err = l.setConnected(false)
		} else {
			pause, err = l.answer(env)
		}
		if err != nil {
			return err
		}
		if !l.sleep(ctx, pause) {
			return nil
		}
	}
	return nil
}

// answer handles one envelope and says how long to pause before the next
// poll.
func (l *voiceListener) answer(env []byte) (time.Duration, error) {
	var a struct {
		OK        *bool           `json:"ok"`
		Error     string          `json:"error"`
		Message   string          `json:"message"`
		Heard     json.RawMessage `json:"heard"`
		AtMs      json.RawMessage `json:"atMs"`
		Selection json.RawMessage `json:"selection"`
		Voice     json.RawMessage `json:"voice"`
	}
	if json.Unmarshal(env, &a) != nil || a.OK == nil {
		return listenRetry, nil // not an envelope: nothing to say
	}
	if !*a.OK {
		switch a.Error {
		case "no_page":
			return listenRetry, l.setConnected(false)
		case "unknown_command", "unavailable", "not_supported":
			msg := a.Message
			if msg == "" {
				msg = "the tab answered " + a.Error + " to voice.listen"
			}
			if err := l.emit(voiceEvent{Type: "unavailable", Message: clip(msg, 500)}); err != nil {
				return 0, err
			}
			return 0, errUnavailable
		}
		return listenRetry, l.setConnected(true) // a poll the tab did not answer in time, say
	}
	if err := l.setConnected(true); err != nil {
		return 0, err
	}
	if v, ok := voiceState(a.Voice); ok && v != l.voice {
		l.voice = v
		if err := l.emit(voiceEvent{Type: "voice-" + v}); err != nil {
			return 0, err
		}
	}
	var heard string
	if json.Unmarshal(a.Heard, &heard) == nil && heard != "" {
		ev := voiceEvent{Type: "heard", Heard: clipRunes(heard, maxHeard)}
		if json.Valid(a.AtMs) {
			ev.AtMs = a.AtMs
		}
		if json.Valid(a.Selection) && string(a.Selection) != "null" {
			ev.Selection = leaveOutRaw(a.Selection, bulkHowShell)
			if len(ev.Selection) > maxSelection {
				ev.Selection, _ = json.Marshal(fmt.Sprintf("[left out: a selection of %d bytes of JSON; scene.describe shows it]", len(a.Selection)))
			}
		}
		return 0, l.emit(ev)
	}
	return listenPause, nil
}

// voiceState reads `voice`: "on"/"off" or true/false.
func voiceState(raw json.RawMessage) (string, bool) {
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		if b {
			return "on", true
		}
		return "off", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && (s == "on" || s == "off") {
		return s, true
	}
	return "", false
}

// setConnected prints connected / disconnected when it changes, once each
// way; the listener starts disconnected.
func (l *voiceListener) setConnected(c bool) error {
	if c == l.connected {
		return nil
	}
	l.connected = c
	if c {
		return l.emit(voiceEvent{Type: "connected"})
	}
	l.voice = "" // a tab that comes back says its voice again
	return l.emit(voiceEvent{Type: "disconnected"})
}

// clipRunes is s cut to at most n runes.
func clipRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}

// listen is `hub stitchslop listen`: the bridge's port is fixed at start
// (so a follower that takes it over is followed), one listener per tab
// (a lock in the config dir next to its session file), events on stdout
// until interrupted; exit 1 after `unavailable`.
func (sc *shellClient) listen(ctx context.Context) error {
	s, err := sc.pickSession()
	if err != nil {
		return err
	}
	sc.Port = s.Port
	unlock, err := lockFile(filepath.Join(sc.ConfigDir, fmt.Sprintf("listen-%d.lock", s.Port)), false)
	if errors.Is(err, hub.ErrLocked) {
		return hub.Exit(hub.ExitFailed, fmt.Sprintf("hub stitchslop: a listener already runs for the tab on port %d (one per tab); its events are the ones to read", s.Port))
	}
	if err != nil {
		return hub.Exit(hub.ExitFailed, "hub stitchslop: "+err.Error())
	}
	defer unlock()
	enc := json.NewEncoder(sc.Stdout)
	l := &voiceListener{
		poll: func(ctx context.Context) ([]byte, error) {
			return sc.do("POST", "/call", map[string]any{"command": "voice.listen", "args": map[string]any{"timeoutMs": voiceListenMs}}, remoteTimeout)
		},
		emit:  func(ev voiceEvent) error { return enc.Encode(ev) },
		sleep: sleepCtx,
	}
	err = l.run(ctx)
	if errors.Is(err, errUnavailable) {
		return hub.Exit(hub.ExitFailed, "")
	}
	if err != nil {
		return hub.Exit(hub.ExitFailed, "hub stitchslop: "+err.Error())
	}
	return nil
}

// sleepCtx waits d, or until ctx ends (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
