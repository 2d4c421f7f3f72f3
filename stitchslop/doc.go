// Package stitchslop implements the Stitch Slop bridge protocol: the page
// WebSocket with pairing, the MCP stdio face, the HTTP control plane and its
// shell client — as a hub adapter and as a standalone bridge.
//
// The contract is docs/protocols/stitchslop.md; the §N.N references in this
// package are its sections.
package stitchslop
