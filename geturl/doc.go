// Package geturl is the GET-only URL transport for URL-reader agents: the
// adapter that serves the data plane (capability bases, the read tools,
// the replay-safe mutation kernel and the /k plugin host) and the
// loopback-only operator control plane, the `hub geturl` commands, and the
// adapter's configuration (including the OpenCode plugin's section).
//
// The contract is docs/protocols/geturl.md; geturl/README.md says how the
// pieces fit and what is not done.
package geturl
