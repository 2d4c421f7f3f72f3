// Package ws serves the hub's WebSockets: endpoints that upgrade after the
// handler's own origin and Host checks, a guard on every socket until it
// authenticates (small messages, a deadline, a cap), receive budgets after,
// the heartbeat (ping every 30 s, dead after 90 s), and the set of sockets a
// server closes and waits for at shutdown (hub.ServeHTTP's Hijacked).
//
// On Linux a socket's frames are read and written with raw non-blocking
// system calls (rawio_linux.go), which keeps the runtime's monitor thread
// asleep between frames, and a frame's write deadline is set only when the
// frame has to wait for room; elsewhere the connection is used as it is.
package ws
