// Package journal is the aiui prompt record: an append-only file of JSON
// lines, one per event (and, after a rotation, the previous such file),
// shared by every backend (and the offline shell) that opens it.
//
//	{"text":"…","id":"…","seq":7,"at":"…","meta":{…},"root":"…"}   a delivered prompt
//	{"ev":"to","id":"…","to":"mcp:face"}                          who took it ("" = pending again)
//	{"ev":"drop","id":"…"}                                         it fell out of the bounds
//
// Delivering a prompt appends its line (and, when it was routed at once,
// its "to" line) in O(prompt). Dead lines (dropped prompts, superseded
// "to" lines, torn or foreign lines) are reclaimed in one of two ways:
//
//   - Rotation, for a record of a MiB or more whose head is more than
//     half dead (a record whose oldest prompts fall out as new ones come
//     in): the head is renamed to path+".prev" and a new head started;
//     prev is deleted once none of its prompts is live. Nothing is
//     copied, and the files hold at most about three times the live
//     bytes.
//   - Compaction, once dead lines make up more than three quarters of
//     the head (small records, and re-encoding records in an older
//     layout): the live lines are copied to a temporary file (in the
//     kernel, with copy_file_range, for prompt lines), fsynced and renamed
//     over the head, costing a third of a copy per appended byte. With a
//     prev it takes prev's live lines too and starts with a base line,
//     so a crash before prev is deleted leaves a head that says prev is
//     stale.
//
// Memory holds only what routing needs (id, seq, root, who took it, and
// where its line is); the text stays in the file and is streamed from it
// when a face or the shell reads a prompt. The text is the first field of
// a prompt line, so an index scan validates it in pieces without ever
// holding a whole line.
//
// Every access holds an exclusive flock on the record's ".lock" file and
// first folds in what other processes appended since (or re-reads the
// files when another process rotated or compacted): two backends on one record see each
// other's prompts, and seqs stay unique across them. A line cut short by
// a crash (kill -9 mid-append) is never folded in: the next append
// terminates it first with "#torn" (see tornEnd), so it is skipped as one
// dead line by every reader, even when only its newline was missing, and
// nothing before or after it is lost.
package journal
