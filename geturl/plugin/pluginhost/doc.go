// Package pluginhost is geturl's plugin host behind the generic /k route:
// the catalog /k discovers (route.Plugins) and the runner of tool calls
// (route.PluginCaller).
//
// A call's arguments are one JSON object, from the raw= tail or a staged
// blob, canonicalised strictly (intents.CanonicalJSON: recursively
// key-sorted, duplicate keys refused) before anything else sees them, so
// the plugin and the journal read the same value. The plugin classifies
// the call as a read or a mutation before anything runs. A call on the
// wrong capability base is not run: it gets the exact same request on the
// right base as its repair (a read-only session, which has no mutation
// base, gets mutations_disabled and no URL). Reads run at once; mutations
// go through the session's IntentJournal exactly like native writes, with
// the identity plugin id + tool + canonical arguments (+ run=), so a
// replayed URL never calls the plugin twice.
//
// A plugin may come and go (plugin.Conditional: the hub's bridges exist
// only under a hub that has them): while absent it is neither listed nor
// callable. A plugin whose tools are a page's (plugin.Open) also takes
// calls of tools it does not list now, so its Classify can answer why
// (the page is offline) instead of the generic unknown_tool.
//
// Plugins are shared by every session; authority is not. Every call gets
// a fresh plugin.Authority — the calling generation's canonical project
// root and permissions — which the plugin may narrow and can never widen.
// A plugin.Gated plugin (a hub bridge) may refuse a session outright: the
// host then leaves it out of that session's /k listing (route.PluginGate)
// and answers its refusal to every use, before Classify or Call.
// Every answer has the project's host path redacted to /project as a last
// line of defence.
package pluginhost
