package stitchslop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// MethodChannel is the notification an utterance is pushed as, the one
// aiui's prompts use: Claude Code shows it in the conversation.
const MethodChannel = "notifications/claude/channel"

// channelCapability is what a server announces so that the client takes
// MethodChannel notifications.
func channelCapability() map[string]any { return map[string]any{"claude/channel": map[string]any{}} }

// errNoVoiceLock: the tab's listen lock is unknown (no bridge) or another
// listener holds it.
var errNoVoiceLock = errors.New("no listen lock")

// voiceChannel pushes the user's utterances to the MCP client as
// MethodChannel notifications for as long as ctx lasts (issue 28: no
// watcher process needed). It polls voice.listen through the face's
// bridge, as `hub stitchslop listen` does, and only while it holds the
// tab's listen lock: one listener per tab, whether a shell's or a face's.
// Only a tab that declares voice.listen among its tools is polled; one
// that answers it has no voice is not polled again until another attaches.
func (f *face) voiceChannel(ctx context.Context) {
	var unlock func()
	held := ""
	release := func() {
		if unlock != nil {
			unlock()
		}
		unlock, held = nil, ""
	}
	defer release()
	lock := func() error {
		dir, port := f.b.voiceDir(), f.b.Port()
		path := ""
		if dir != "" && port != 0 {
			path = filepath.Join(dir, fmt.Sprintf("listen-%d.lock", port))
		}
		if path == held && path != "" {
			return nil
		}
		release()
		if path == "" {
			return errNoVoiceLock
		}
		u, err := lockFile(path, false)
		if err != nil {
			return errNoVoiceLock
		}
		unlock, held = u, path
		return nil
	}
	l := &voiceListener{
		poll: func(ctx context.Context) ([]byte, error) {
			if !f.b.waitAttached(ctx, voiceListenMs*time.Millisecond) {
				return nil, ErrNoPage
			}
			if !declaresVoice(f.b) {
				// Not a command this tab offers: nothing to poll until
				// its tools change.
				release()
				return nil, ErrNoPage
			}
			if err := lock(); err != nil {
				return nil, err
			}
			args, _ := json.Marshal(map[string]any{"timeoutMs": voiceListenMs})
			return f.b.Call(withAgent(ctx, f.id), "voice.listen", args)
		},
		emit: func(ev voiceEvent) error {
			if ev.Type != "heard" {
				return nil
			}
			meta := map[string]string{"source": "stitchslop", "kind": "voice"}
			if len(ev.AtMs) > 0 {
				meta["atMs"] = string(ev.AtMs)
			}
			if len(ev.Selection) > 0 {
				meta["selection"] = string(ev.Selection)
			}
			if err := f.srv.Notify(ctx, MethodChannel, map[string]any{"content": ev.Heard, "meta": meta}); err != nil {
				f.b.logger().Debug("an utterance could not be pushed", "err", err)
			}
			return nil
		},
		sleep: sleepCtx,
	}
	for ctx.Err() == nil {
		if err := l.run(ctx); !errors.Is(err, errUnavailable) {
			return
		}
		// This tab has no voice: leave the lock to others, and wait for
		// the tab to go (another may have one).
		release()
		for ctx.Err() == nil {
			if _, attached := f.b.Tools(); !attached {
				break
			}
			sleepCtx(ctx, listenRetry)
		}
		l.connected, l.voice = false, ""
	}
}

// declaresVoice reports whether the attached tab offers voice.listen.
func declaresVoice(b bridgeFace) bool {
	tools, attached := b.Tools()
	if !attached {
		return false
	}
	for _, t := range tools {
		if t.Name == "voice.listen" {
			return true
		}
	}
	return false
}
