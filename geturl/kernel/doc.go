// Package kernel runs geturl's tool routes. Each route is declared once, in
// the route table, with the capability base it belongs to and its strict
// parameter spec (package transport); the read routes (/r /f /g /o /t /p, /k
// discovery and /z range fallback) bind those parameters to the typed
// libraries (sandbox, files, search, outline, discover, replay) and shape
// their results exactly as the spec words them. Mutation routes are declared
// here without a handler (so capability-base repairs and Init know them);
// package mutation installs theirs with Handle, and /k hands tool calls to
// the catalog when it is a PluginCaller (package pluginhost).
//
// The kernel knows nothing about HTTP, tokens or hosts: the gateway hands it
// a Call with the session view it needs (scope, permissions, replay store,
// coverage recorder) and the exact bases that recovery URLs start with.
package kernel
