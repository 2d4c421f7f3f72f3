// Package hub holds the services every adapter shares: the loopback listener,
// the origin and Host policy, the secret store, the WebSocket heartbeat, the
// lifecycle (idle rules), XDG directories, logging setup and small HTTP/JSON
// helpers. It depends only on the standard library and the project's chosen
// third-party libraries, never on an adapter.
package hub
