// Package supervisor loads and validates the hub configuration, builds the
// enabled adapters from a registry, runs one goroutine per adapter with
// panic recovery and jittered, capped restart backoff, enforces the
// hub-level idle rules, serves the authenticated control endpoint, and owns
// the daemon's state files. Its client side (ControlCall, ControlTransport:
// `hub status`, `hub stop`, hub mcp) sends the key in hub.json only to a
// socket of this user's (portowner.Dialer): a control port another user
// holds is refused, naming them and the state file.
package supervisor
