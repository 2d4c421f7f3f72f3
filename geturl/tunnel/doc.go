// Package tunnel runs the control plane's managed Cloudflare Quick Tunnel:
// `cloudflared` as a child process pointed only at the data plane, with an
// explicit empty temporary config (so a user's named-tunnel ingress cannot
// interfere with --url mode) that is removed when the child exits. The
// child's environment is the hub's without its secrets (package childenv)
// and, for the same reason as the config, without cloudflared's own
// TUNNEL_* settings except the edge's IP version and bind address. The
// public hostname is parsed from cloudflared's output and lives only in
// memory: a crash never persists an ephemeral hostname. Only the child this
// package started is ever signalled.
package tunnel
