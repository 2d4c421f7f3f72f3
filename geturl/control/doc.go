// Package control is geturl's operator side: the keyed control plane on
// its own loopback port (the JSON API the CLI drives, under /api/), the
// control page and its API (under /ui/, logged in with a one-time link,
// its secret in SessionHeader), the control file that lets the CLI find
// and authenticate to a running plane (and its keeper), the recent-activity
// list the page shows, and the `hub geturl` commands with their Client.
//
// It serves what the adapter (package geturl) gives each run in a Plane:
// the session manager, the route table, the tunnel, the plugin catalogue.
// It never serves the data plane and builds no adapter: `hub geturl serve`
// is handed to Command by the adapter.
package control
