// Package pixelle implements the pixelle-relay/0.2 local bridge: sessions,
// pairing codes, browser/agent routing over /relay, and the agent command
// client — as a hub adapter and as a standalone relay.
//
// The contract is docs/protocols/pixelle.md.
package pixelle
