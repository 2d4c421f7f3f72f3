// Package gateway is geturl's data plane: the http.Handler a tunnel points
// at. It answers GET and HEAD only, checks the Host header (the configured
// public origin's host, or the bound loopback port), looks capability
// tokens up through the Sessions interface, serves the compact Init
// contract at /v0/init/<tok> (alias /v0/bootstrap/<tok>) and hands
// /v0/<tok>/<route> to the kernel.
//
// Unknown or altered tokens all get one identical opaque 404, so the data
// plane is no oracle for tokens. Authenticated mistakes get structured,
// self-correcting answers instead (HTTP 200, ok:false): wrong_capability_base
// (the exact URL on the read base from the mutation base; from the read
// base, bases.m's key and the suffix to append, since a weaker base never
// names a stronger one), /s?path= on the read base repaired to /t,
// unknown_route. Every tool answer is stored in the session's replay store
// at its base's level (the read base never replays a mutation answer); one
// larger than a range part starts with a rangeFallback object naming its /z
// recovery URL. Tokens never reach a log line.
//
// The compatibility surface (compat.go) is served here too: each route's
// long name ("/" + its tool's name) resolves to the compact route's own
// entry, /manifest describes what the capability it is fetched on may use,
// and /call?tool=&content=<base64url(JSON)> serves a tool from a strictly
// decoded parameter object as the compact route would.
package gateway
