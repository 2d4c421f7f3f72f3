// Package adapters defines the contract between the supervisor and each
// protocol bridge: the Adapter interface, the Env of shared services handed
// to it, its Status snapshot, its configuration hooks, and an explicit
// Registry built by the caller (no init-time registration).
//
// A bridge's Factory is also the only way the rest of the binary reaches
// it: its Command gets what it needs of the binary as a CommandEnv (the
// running hub, its bridges), its Remote hook reaches the running hub's
// adapter from another process, and its Face is its part of `hub mcp`;
// each is fed from the adapter's Status, which carries what a client must
// know (ports, Dir), so nothing else imports a bridge or parses its config.
package adapters
