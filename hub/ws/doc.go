// Package ws serves the hub's WebSockets: endpoints that upgrade after the
// handler's own origin and Host checks, a guard on every socket until it
// authenticates (small messages, a deadline, a cap), receive budgets after,
// the heartbeat (ping every 30 s, dead after 90 s), and the set of sockets a
// server closes and waits for at shutdown (hub.ServeHTTP's Hijacked).
package ws
