// Package supervisor loads and validates the hub configuration, builds the
// enabled adapters from a registry, runs one goroutine per adapter with
// panic recovery and jittered, capped restart backoff, enforces the
// hub-level idle rules, serves the authenticated control endpoint, and owns
// the daemon's state files.
package supervisor
