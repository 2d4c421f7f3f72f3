// Package intents is geturl's intent journal: one Journal per session
// generation, it turns every mutation GET into an intent with a call id and
// runs each intent at most once, however many times the URL arrives, across
// restarts of the process too when the journal is durable (Create, Load:
// an append-only private file per generation, see file.go). (aiui's
// journal is another thing, an append-only file of a page's events.)
//
// A URL reader may fetch a URL twice, or lose an answer and fetch it again;
// an intermediary may retry below the agent. So a mutation GET does not
// perform its side effect directly: it asks the journal for the intent
// named by its call id. The first request creates the record (pending) and
// receives the one function that executes it; every identical request
// after that gets the existing record and a replay count, never a second
// execution.
//
// The call id is deterministic: auto:<tool>:<hex> over the tool, its
// canonical semantic arguments (decoded content, resolved virtual paths —
// never wait=, never how the content travelled) and the run= nonce, so
// every replay of one logical operation lands on one record. An explicit
// call= names the record instead; reusing it with other arguments is a
// structured conflict, and call= with run= is refused.
//
// Records go pending → running → succeeded | failed, keep their result as
// JSON or their structured error, and are bounded (count and bytes per
// journal, evicting the oldest finished record). An evicted record leaves
// a tombstone, so a late replay of its URL still does not execute again.
//
// A durable journal writes each intent's start to its file, synced, before
// the intent's side effect can begin, and its outcome after. A process that
// dies mid-execution leaves the record running; loaded again, it is failed
// with CodeInterrupted (outcome unknown) and never runs again by itself.
package intents
