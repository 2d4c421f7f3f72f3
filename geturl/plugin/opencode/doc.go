// Package opencode is geturl's OpenCode Control plugin ("opencode-control"):
// four tools behind the generic /k route that inspect and drive a local
// `opencode serve` for a URL-reader agent. opencode_info reads the service,
// opencode_session inspects and drives existing sessions whose working
// directory lies inside the caller's project root, opencode_worker runs
// durable, permission-narrowed worker sessions (alone or as a swarm), and
// opencode_request routes OpenCode's permission and question walls back to
// the agent.
//
// The plugin is lazy: constructing it never touches the network. The first
// call checks that the configured origin is loopback HTTP, identifies the
// process behind the port before any credential is sent, and pins that
// identity for every later connection, so a different process that takes
// the port over fails closed instead of receiving the password. Every
// connection is also checked, after connecting and before a byte is
// written, to reach a socket of this user's (the kernel's socket table,
// package hub/portowner): another user's listener on the port is sent
// nothing, and where the owner cannot be known the credential is not sent.
// The /k plugin listing (Status) never sends the credential.
package opencode
