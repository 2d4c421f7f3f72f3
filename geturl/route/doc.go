// Package route is the vocabulary geturl's route handlers and its data
// plane share: a Call on its way through a route (the session view it
// runs for, the exact capability bases, the bound arguments, the request
// as written), an Entry of the route table and its Handler, the base kinds
// and capability tokens (TokenTable finds a token's live generation in
// constant time), a generation's Permissions, the /k plugin catalog's
// interfaces, and the refusals more than one handler gives
// (wrong_capability_base).
//
// It declares no route: package kernel holds the table and imports the
// handlers (its own read routes, package mutation's, the plugin catalog
// through Plugins), so no handler registers itself back.
package route
