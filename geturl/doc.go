// Package geturl is the GET-only URL bridge for URL-reader agents. This
// package is the adapter (Factory, New, Config, Serve, Status): it builds
// the data plane (package gateway over the route table, package kernel,
// whose handlers reach the engines under engine/), the session store
// (package session), the /k plugin host and its plugins (under plugin/),
// and, each run, the loopback-only operator control plane (package
// control: its page, the `hub geturl` commands and their client, which
// Locate finds).
//
// The contract is docs/protocols/geturl.md; geturl/README.md draws the
// layers (its "Layout") and says what is not done.
package geturl
