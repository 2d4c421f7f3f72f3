// Package ws serves the hub's WebSockets: endpoints that upgrade after the
// handler's own origin and Host checks, a guard on every socket until it
// authenticates (small messages, a deadline, a cap), receive budgets after,
// the heartbeat (ping every 30 s, dead after 90 s), and the set of sockets a
// server closes and waits for at shutdown (hub.ServeHTTP's Hijacked).
//
// On Linux a socket served by hub.ServeHTTP is read and written with raw
// non-blocking system calls (hub/rawio), and a frame's write deadline is
// set only when the frame has to wait for room; elsewhere a frame's write
// sets and clears its deadline. There, too, a session's Reply to the
// message it handles is held and sent in one write once the reader finds
// nothing more to read (rawio.WriteHolder): a peer that sends frames back
// to back gets their replies together, one that waits for each gets it at
// once.
package ws
