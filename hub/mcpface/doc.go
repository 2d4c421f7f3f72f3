// Package mcpface is the one MCP layer every agent face in this repository
// is built on: the stitchslop face, the aiui face and `hub mcp`. It wraps
// the official Go SDK (github.com/modelcontextprotocol/go-sdk) where the
// SDK does not do what our protocol specs ask.
//
// [LineTransport] is MCP's stdio framing, with garbage answered and
// survived instead of ending the session, and a bounded line length.
// Every face serves MCP through [Stdio], and nothing else writes to
// stdout: stdout belongs to the protocol.
//
// [Server] builds an SDK server with the tools capability and list_changed
// set explicitly, and middleware that knows when a client announced
// itself (initialize, or a stateless client's first request), leaves a
// cancelled call unanswered, and sends one bare list_changed per change
// instead of the SDK's timer-debounced ones.
//
// [TextResult], [ErrorResult] and [ImageFromDataURL] build tool results.
package mcpface
