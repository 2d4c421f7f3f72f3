// Package mcpserver is the one MCP layer every agent face in this repository
// is built on: the stitchslop face, the aiui face and `hub mcp`.
//
// It wraps the official Go SDK (github.com/modelcontextprotocol/go-sdk)
// and adds what the SDK does not do the way our protocol specs ask:
//
//   - [LineTransport], MCP's stdio framing with garbage answered and
//     survived instead of ending the session, and a bounded line length;
//     when the input ends, calls already read are answered (for up to
//     5 s) before the session ends, where the SDK would drop them;
//   - [Server], a server builder whose middleware knows when a client
//     announced itself (initialize, or a stateless client's first
//     request), answers cancelled calls with silence, and sends one bare
//     notifications/tools/list_changed per change (or, with
//     ListChangedDelay, one per burst) instead of the SDK's ones (to a
//     stateless client, on each subscriptions/listen stream it opened);
//   - [Forwarder], which registers a page's tools with their raw JSON
//     schemas, updates and removes them, and maps their names; calls to
//     them take a fast path past the SDK (fastcall.go), with the same
//     answers, because the SDK's per-request cost alone would exceed what
//     issue 14 allows a call through `hub mcp`;
//   - result helpers for text, errors and data-URL images.
//
// Every face speaks MCP on stdio through a LineTransport ([Stdio] is the
// process's own), and nothing else writes to stdout: stdout belongs to
// the protocol.
package mcpserver
