// Package aiui implements the aiui channel backend: binary /ws frames with
// the text-concat and intent-v1 formats, the /tools page-tool directory,
// /prompt, /health and hot reload, with MCP and shell faces.
//
// The contract is docs/protocols/aiui.md.
package aiui
