// Package pluginhost is geturl's plugin host behind the generic /k route:
// the catalog /k discovers (kernel.Plugins) and the runner of tool calls
// (kernel.PluginCaller).
//
// A call's arguments are one JSON object, from the raw= tail or a staged
// blob, canonicalised strictly (journal.CanonicalJSON: recursively
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
// Plugins are shared by every session; authority is not. Every call gets
// a fresh plugin.Authority — the calling generation's canonical project
// root and permissions — which the plugin may narrow and can never widen.
// Every answer has the project's host path redacted to /project as a last
// line of defence.
package pluginhost
