package intent

import "context"

// RealtimeSession is one upstream realtime transcription socket, opened at
// thread-open so its handshake overlaps the arm→talk gap. Audio frames are
// appended as they arrive; a segment's talk-end commits it. Deltas and the
// final come back through the callbacks given to the dialer.
type RealtimeSession interface {
	Append(segment int, pcm []byte) error
	Commit(segment int) error
	Close() error
}

// RealtimeEvents receives upstream transcription events.
type RealtimeEvents struct {
	Delta func(segment int, cumulative string)
	Final func(segment int, text string, err error)
}

// RealtimeDialer opens a realtime session with the key, model and delay.
// It must not block on the network: the handshake proceeds in the
// background while audio queues. With no dialer (nil), no key, or an
// upstream failure, a realtime turn takes the loud degraded path on each
// talk-end — an empty transcript-final with a note naming the cause —
// never a silent switch to mock.
type RealtimeDialer func(ctx context.Context, key, model, delay string, ev RealtimeEvents) (RealtimeSession, error)
