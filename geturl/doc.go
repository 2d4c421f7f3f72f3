// Package geturl is the GET-only URL transport for URL-reader agents
// (capabilities, journaled replay-safe mutations, sandboxed file tools). Its
// protocol has not landed yet: the adapter is registered so its config keys
// are known and `hub status` shows it as "not implemented" — it never serves
// fake protocol behaviour.
//
// The contract it is to implement is docs/protocols/geturl.md.
package geturl
