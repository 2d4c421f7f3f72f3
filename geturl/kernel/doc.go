// Package kernel is geturl's route table and the handlers of its read
// routes. Each route is declared once, in the table, with the capability
// base it belongs to, its strict parameter spec (package transport) and
// its handler: the read routes (/r /f /g /o /t /p, /k discovery and /z
// range fallback) are the kernel's own, binding those parameters to the
// typed engines (sandbox, files, search, outline, discover, replay) and
// shaping their results exactly as the spec words them; the mutation
// routes' handlers are package mutation's Host (Options.Mutations), and
// /k hands tool calls to the catalog when it is a route.PluginCaller
// (package pluginhost). The table imports the handlers; none registers
// itself back.
//
// The kernel knows nothing about HTTP, tokens or hosts: the gateway hands it
// a route.Call with the session view it needs (scope, permissions, replay
// store, coverage recorder) and the exact bases that recovery URLs start
// with.
package kernel
