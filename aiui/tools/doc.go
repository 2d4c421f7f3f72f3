// Package tools is the /tools page-tool directory of the aiui channel:
// registrations keyed by (clientId, ns), hash-gated registration logging,
// tab activation, call routing with the active-tab rung, per-call timeouts,
// in-flight calls rejected on disconnect, and the debounced change signal
// gated by the ns|hash|active content signature.
package tools
