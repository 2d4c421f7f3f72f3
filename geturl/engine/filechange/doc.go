// Package filechange is the engine that changes a project's files behind
// geturl's /w (write), /e (edit) and /a (apply_patch): a typed Go API with
// no HTTP, no URL and no journal. The intent journal calls it at most once per intent; everything
// here assumes that and is not itself idempotent.
//
// An Engine belongs to one session generation: the project Scope, the
// session's read Ledger (what /r returned, for the whole-file overwrite
// rule), an EditTracker for the serial-edit hint, and the process-wide
// Gate that serialises mutations per canonical project root across
// sessions.
//
// Every path, a patch's Move to and Delete File included, is resolved with
// the sandbox (realpath containment, symlinks followed and required to
// stay inside; a dangling link is followed to where a create would land)
// and then operated on through an os.Root of the project, so a symlink
// swapped in after the check cannot lead out either. Results and errors
// name files only by their virtual "/project/..." paths; OS error texts,
// which carry host paths, are reduced to codes. Errors are
// *fault.Error values with a stable errorCode, an agentAction and a
// repairHint that says what to do.
//
// Every write is atomic: the bytes go to a hidden temporary file in the
// target's directory, are fsynced, and are renamed over the target (a new
// file is hard-linked into place instead, so a file that appeared meanwhile
// is never clobbered); the directory is fsynced after. An existing file
// keeps its permission bits (not setuid/setgid/sticky bits, owner or hard
// links: the rename gives the name a new inode); a new file gets 0666 less
// the process umask (0644 under the usual 022), new directories 0777 less
// the umask. Content is written byte for byte: CR, NUL and every other
// byte, emoji, trailing whitespace and a missing final newline survive.
//
// Whole-file replacement (Write over an existing file) needs complete
// current read coverage in the session's ledger; Edit and ApplyPatch do
// not, because they prove their knowledge by quoting the text they change.
// Every successful mutation invalidates the coverage of the files it
// touched, so the next whole-file replacement needs a fresh read.
//
// The serial-edit hint follows the spec: SerialEditCount distinct
// successful edits within SerialEditWindow make an edit's result carry
// SuggestedBulkPatch and EfficiencyHint.
package filechange
