// Package session owns geturl's operator state: the project registry and
// the session definitions (persisted, 0600 under a 0700 directory), and the
// live session generations with their capability tokens (never logged;
// kept across a restart in tokens.json, the mutation token only together
// with its generation's durable intent journal: see TokensFileName and
// JournalsDirName). It enforces the limits (16 enabled sessions, 64
// definitions) and the rotation rules: rotating, stopping or deleting one
// session never touches another, and changing a project's root or
// permissions rotates only the sessions bound to it.
package session
