// Package mutation is geturl's mutation routes: the Host's handlers of /w
// (write), /e (edit), /a (apply_patch), /x (terminal), /s (stage), /b (blob
// status) and /j (journal result), with their parameter specs, which the
// kernel's route table names. The engines below it (the intent journal,
// staging, the file-change engine, the terminal) answer in fault.Error;
// this package turns their faults into the agent's answer and adds the
// recovery URLs only it can build (poll, retry, repeat, a background
// launch's foreground repair).
//
// Every file or terminal mutation goes through the session generation's
// intent journal (package intents): the handler binds the route's strict
// parameters, resolves the content (the raw= tail, a staged blob, or a
// parameter, exactly one), resolves paths to their /project spelling,
// refuses what it must before any intent exists, and then asks the
// journal for the intent. A new intent is executed once, detached from
// the request (a dropped connection never cancels it; the adapter's
// lifetime bounds it); a replay answers the existing record. The answer is
// the record: its state, its result or structured error, a poll URL while
// it is pending or running, a retry URL (a fresh run= identity) when a
// failure can be recovered from, and for a replayed terminal command a
// repeat URL once the project has changed since it ran.
//
// Staging (/s, /b) needs no journal: its chunks are immutable, so a
// replayed chunk is a no-op by construction.
//
// Permissions are per route: file tools need the project's write
// permission, the terminal its terminal permission, staging and results
// either. A read-only session has no mutation base at all, so none of
// these routes can be reached from it.
package mutation
