// Package hubmcp is `hub mcp`: one MCP server for the whole hub, so one
// line in an agent's config (`claude mcp add hub -- hub mcp`) gives it
// every bridge at once.
//
// It finds the running hub through its state file (or starts one in the
// background, the `hub start` path), holds it alive while attached, and
// serves hub_status beside each bridge's tools. It knows no bridge: it is
// a loop over the registry's factories, each with a Face (adapters.Face)
// that registers its tools on the one shared server, contributes its
// sentences of the instructions and any experimental capability, follows
// the hub's adapter as its status line changes, and withdraws its tools
// with the reason when the adapter or the hub is not there. Each face
// reaches its bridge the way the bridge's own shell and MCP faces do,
// sending any credential only to a socket of this user's
// (portowner.Dialer), as hubmcp sends the hub's own key when it attaches.
// A bridge that is disabled or not running contributes no tools, and
// hub_status says why. A face whose tools include its pages' own
// (adapters.FacePages) has them listed in hub_status with the arguments
// of its generic call that reach each, so a client that never re-lists
// after list_changed can still find and call a page's tool.
//
// It sits beside cmd/hub in the layout, above the registry: it imports no
// bridge package (registry/deps_test.go holds it to that), and none
// imports it.
package hubmcp
