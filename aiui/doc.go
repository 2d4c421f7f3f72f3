// Package aiui implements the aiui channel backend: binary /ws frames with
// the text-concat and intent-v1 formats, the /tools page-tool directory,
// /prompt, /health and hot reload, with MCP and shell faces.
//
// The contract is docs/protocols/aiui.md.
//
// New(cfg) builds a Server, the configuration (Kind says who runs it: the
// hub's adapter, `hub aiui serve` or the MCP face). Each Serve builds a
// fresh backend behind an atomic.Pointer that Status and the in-process
// ToolBridge read.
package aiui
