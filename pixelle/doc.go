// Package pixelle implements the pixelle-relay/0.2 local bridge: sessions,
// pairing codes, browser/agent routing over /relay, and the agent command
// client — as a hub adapter and as a standalone relay.
//
// The contract is docs/protocols/pixelle.md.
//
// New(cfg) builds a Server, the configuration (Config, Limits, the clock).
// Each Serve builds a fresh relay (its sessions, connections and
// credentials) behind an atomic.Pointer that Status and the in-process
// ToolBridge read; each /relay socket is a conn, as net/http has Server and
// conn.
package pixelle
