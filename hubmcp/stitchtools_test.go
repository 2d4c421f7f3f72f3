package hubmcp

// stitchOwnTools are the stitchslop bridge's own tools as hub mcp offers
// them, in tools/list order, while a stitchslop bridge is known.
const stitchOwnTools = "stitchslop_wait_for_connection,stitchslop_pair,stitchslop_connection_status"
