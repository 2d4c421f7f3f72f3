// Package stitchslop implements the Stitch Slop bridge protocol: the page
// WebSocket with pairing, the MCP stdio face, the HTTP control plane and its
// shell client — as a hub adapter and as a standalone bridge.
package stitchslop
