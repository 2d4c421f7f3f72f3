package filechange

import (
	"context"
	"errors"

	"github.com/hubdev/hub/geturl/fault"
)

// ApplyPatch is /a: it parses an apply_patch text (see ParsePatch for the
// grammar), preflights every section and hunk against the current files
// (sandbox resolution of every path, Move to included; hunks located; sizes
// checked) before the first write, then commits the net change of each
// file. If the commit fails part way, the changes already made are rolled
// back (see txn). A patch that does not parse or apply changes nothing and
// says which section, hunk and patch line is at fault.
//
// Rules beyond the grammar: Add File refuses an existing file (update it,
// or delete it first in the same patch); Move to refuses an existing
// destination and keeps the source's permission bits; Delete File and a
// move's source must be regular files named directly, not symlinks;
// updated files keep their permission bits, added ones get 0666 less the
// umask; deleting a directory's last file leaves the directory. A
// successful patch ends the session's serial-edit streak.
func (e *Engine) ApplyPatch(ctx context.Context, text string) (*PatchResult, error) {
	lim := e.Limits.withDefaults()
	p, err := parsePatch(text, lim)
	if err != nil {
		return nil, parseFailure(err)
	}
	if len(p.Files) == 0 {
		return nil, refusal(CodePatchEmpty, "the patch has no file sections", "add *** Add File:, *** Update File: or *** Delete File: sections between *** Begin Patch and *** End Patch", fault.ActionCorrectRequest, true)
	}
	f, done, terr := e.begin(ctx)
	if terr != nil {
		return nil, terr
	}
	defer done()
	pl := newPlanner(e, f, lim)
	files, terr := pl.preflight(p)
	if terr != nil {
		return nil, terr
	}
	changes := pl.changes()
	written, terr := commit(f, changes)
	if terr != nil {
		if terr.Code == CodeRollbackIncomplete {
			for _, v := range pl.order {
				e.invalidate(v.t.host)
			}
		}
		return nil, terr
	}
	res := &PatchResult{Files: files, BytesWritten: written}
	for _, c := range changes {
		res.changed = append(res.changed, c.v.t.virtual)
	}
	for _, fr := range files {
		res.Hunks += len(fr.Hunks)
	}
	for _, v := range pl.order {
		if v.dirty {
			e.invalidate(v.t.host)
		}
	}
	e.Edits.Reset()
	return res, nil
}

func parseFailure(err error) *fault.Error {
	var pe *PatchError
	if !errors.As(err, &pe) {
		return refusal(CodePatchInvalid, err.Error(), "", fault.ActionCorrectRequest, true)
	}
	if pe.Code == CodePatchTooLarge {
		return refusal(CodePatchTooLarge, pe.Error(), "split the change into several patches", fault.ActionCorrectRequest, true)
	}
	e := refusal(CodePatchInvalid, pe.Error(), "fix the patch text: *** Begin Patch, then *** Add File: / *** Update File: / *** Delete File: sections, then *** End Patch; hunk lines start with ' ', '-' or '+'", fault.ActionCorrectRequest, true)
	if pe.Line > 0 {
		e.With("patchLine", pe.Line)
	}
	return e
}
