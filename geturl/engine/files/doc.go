// Package files is the engine behind /r (read) and /t (stat).
//
// A Reader reads up to Limits.MaxPaths agent paths in one call. Each file
// gets a slice of one text allowance: a single read may return up to
// Limits.SingleFileCap bytes; a multi-read first takes a fixed per-file wire
// overhead off Limits.Budget and then shares the rest max-min fairly (a
// small file takes only what it needs, the rest is split among the larger
// ones), so one large first file cannot starve the later ones. Text is cut
// on line boundaries and each file reports the lines it covers, its total
// lines, size and a content fingerprint, whether everything requested came
// back, and where to continue when it did not. Directories return a bounded
// sorted listing (its entries count as lines); binary files (a NUL byte in
// the first 8 KiB) are reported, never dumped.
//
// Coverage and Ledger record which lines of which fingerprint an agent has
// been shown, so a later whole-file overwrite can require complete current
// coverage. Paths are resolved through a sandbox.Scope and reported only in
// their virtual "/project/..." form.
package files
