// Package hubmcp is `hub mcp`: one MCP server for the whole hub, so one
// line in an agent's config (`claude mcp add hub -- hub mcp`) gives it
// every bridge at once.
//
// It finds the running hub through its state file (or starts one in the
// background, the `hub start` path), holds it alive while attached, and
// serves each running bridge's tools under names that every MCP client
// accepts: hub_status; the Stitch Slop tab's tools (stitchslop_…) and
// stitchslop_wait_for_connection; pixelle_state, pixelle_selection and
// pixelle_call; aiui's channel_info, page_tools_list and page_tools_call,
// with each aiui prompt pushed as notifications/claude/channel. Each
// bridge is reached the way its own shell and MCP faces reach it: the
// stitchslop session file and control plane, the aiui control file, the
// stored pixelle credential, each sent only to a socket of this user's
// (portowner.Dialer), as the hub's own key is when it attaches. A bridge
// that is disabled or not running contributes no tools, and hub_status
// says why.
//
// It sits beside cmd/hub in the layout: it may import every protocol
// package, and none imports it.
package hubmcp
