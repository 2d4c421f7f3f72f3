// Package companion is geturl's browser companion, server side: a browser
// extension pairs with the loopback control plane (the operator approves
// each device on the control page or with `hub geturl companion
// approve`), binds a chat conversation to a new, isolated geturl session
// on a chosen project, and keeps that session's authority alive only
// while its heartbeat holds a short lease.
//
// The device API lives under /companion/ on the control plane (never the
// data plane): only an extension's Origin, only Host 127.0.0.1:<control
// port>, bodies of at most MaxBody bytes of strict JSON. A device's
// credential is a secret the extension generated; companion.json (0600,
// beside the session registry) keeps only its SHA-256, compared in
// constant time. Pending pairing requests live in memory only.
//
// The lease is enforced where capabilities are checked: Service.Lookup
// wraps the session manager's token table for the data-plane gateway, and
// answers a companion-owned generation only while its binding is live,
// its lease unexpired and the generation the one it was bound with, so an
// expired, disconnected, rotated or revoked binding's URLs fail exactly as
// an unknown token's do. A binding never comes back: its session is
// deleted when it ends, and a new bind mints a new session and Init.
// Sessions the operator made by hand never pass through any of this.
package companion
