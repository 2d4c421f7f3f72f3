// Package hub holds the services every adapter shares: the loopback listener,
// the origin and Host policy, HTTP serving (with header and body deadlines
// and a connection limit; WebSockets are its package ws), the secret store and the private-file
// checks, the Guard that contains panics outside Serve, the lifecycle (idle
// rules), XDG directories, logging setup (thinning, rotation) and small
// HTTP/JSON helpers. It depends only on the standard library and the project's chosen
// third-party libraries, never on an adapter.
package hub
