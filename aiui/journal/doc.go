// Package journal is the aiui prompt record: an append-only file of JSON
// lines, one per event, shared by every backend (and the offline shell)
// that opens it.
//
//	{"text":"…","id":"…","seq":7,"at":"…","meta":{…},"root":"…"}   a delivered prompt
//	{"ev":"to","id":"…","to":"mcp:face"}                          who took it ("" = pending again)
//	{"ev":"drop","id":"…"}                                         it fell out of the bounds
//
// Delivering a prompt appends its line (and, when it was routed at once,
// its "to" line) in O(prompt); nothing rewrites the file except a
// compaction, which runs once the lines no longer live (dropped prompts,
// superseded "to" lines, torn or foreign lines) make up more than three
// quarters of it: the live lines are copied to a temporary file (in the
// kernel, with copy_file_range, for prompt lines), fsynced and renamed
// over the record, so its cost is amortised over the appends that made it
// due (a third of a copy per appended byte).
//
// Memory holds only what routing needs (id, seq, root, who took it, and
// where its line is); the text stays in the file and is streamed from it
// when a face or the shell reads a prompt. The text is the first field of
// a prompt line, so an index scan validates it in pieces without ever
// holding a whole line.
//
// Every access holds an exclusive flock on the record's ".lock" file and
// first folds in what other processes appended since (or re-reads the file
// when another process compacted it): two backends on one record see each
// other's prompts, and seqs stay unique across them. A line cut short by
// a crash (kill -9 mid-append) is never folded in: the next append
// terminates it first, so it is skipped as one dead line and nothing
// before or after it is lost.
package journal
