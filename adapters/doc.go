// Package adapters defines the contract between the supervisor and each
// protocol bridge: the Adapter interface, the Env of shared services handed
// to it, its Status snapshot, its configuration hooks, and an explicit
// Registry built by the caller (no init-time registration).
package adapters
