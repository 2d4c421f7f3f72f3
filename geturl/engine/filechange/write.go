package filechange

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/fault"
)

// Write is /w: it creates the file at p with content, making missing parent
// directories inside the scope, or replaces an existing file whole. A
// replacement requires that this session's ledger holds complete read
// coverage of the file's current version (every line returned by /r, pages
// of a truncated read accumulating, with the fingerprint unchanged since);
// otherwise it is refused with agentAction reread_then_retry and the lines
// still to read. The new bytes are exactly content. A replaced file keeps
// its permission bits; a new one gets 0666 less the process umask (0644
// under the usual 022).
func (e *Engine) Write(ctx context.Context, p, content string) (*WriteResult, error) {
	lim := e.Limits.withDefaults()
	if int64(len(content)) > lim.MaxFileBytes {
		return nil, refusal(CodeContentTooLarge, fmt.Sprintf("content is %d bytes, more than %s", len(content), sizeText(lim.MaxFileBytes)), "", "", false)
	}
	f, done, terr := e.begin(ctx)
	if terr != nil {
		return nil, terr
	}
	defer done()
	t, terr := e.resolve(p)
	if terr != nil {
		return nil, terr
	}
	res := &WriteResult{Path: t.virtual, BytesWritten: len(content), Fingerprint: files.Fingerprint([]byte(content))}
	name := path.Base(t.rel)
	var d *dir
	if t.exists {
		d = f.dir(path.Dir(t.rel))
		defer d.close()
		old, fi, err := d.readRegular(name, lim.MaxFileBytes)
		if err != nil {
			return nil, fileFailure(t.virtual, "read", err, lim.MaxFileBytes)
		}
		fp := files.Fingerprint(old)
		if terr := e.checkCoverage(t, fp); terr != nil {
			return nil, terr
		}
		if err := d.replace(name, []byte(content), fi.Mode().Perm(), true); err != nil {
			return nil, ioFailure(t.virtual, "write", err)
		}
		res.PreviousFingerprint = fp
	} else {
		created, err := f.mkdirs(t.rel)
		if err != nil {
			return nil, ioFailure(t.virtual, "create directories for", err)
		}
		d = f.dir(path.Dir(t.rel))
		defer d.close()
		if err := d.create(name, []byte(content), 0, false); err != nil {
			d.close() // a directory held open cannot be removed everywhere
			f.rmdirs(created)
			if errors.Is(err, fs.ErrExist) {
				return nil, refusal(CodeFileExists, t.virtual+" appeared while it was being created", "read it, then retry", fault.ActionRereadThenRetry, true).With("path", t.virtual)
			}
			return nil, ioFailure(t.virtual, "write", err)
		}
		res.Created = true
		for _, c := range created {
			res.CreatedDirs = append(res.CreatedDirs, e.Scope.Virtual(e.Scope.Root()+"/"+c))
			f.syncDir(path.Dir(c))
		}
	}
	d.sync()
	e.invalidate(t.host)
	return res, nil
}

// checkCoverage allows a whole-file replacement of t, whose current
// fingerprint is fp, only with complete current read coverage.
func (e *Engine) checkCoverage(t target, fp string) *fault.Error {
	var cov files.Coverage
	var ok bool
	if e.Ledger != nil {
		cov, ok = e.Ledger.Lookup(t.host)
	}
	const localized = "; for a localized change, /e or /a needs no full read"
	var err *fault.Error
	switch {
	case ok && cov.Complete(fp):
		return nil
	case !ok:
		err = refusal(CodeReadRequired, t.virtual+" exists and has not been read in full by this session since it last changed",
			"read the whole file with /r (follow next until complete), then retry"+localized, fault.ActionRereadThenRetry, true)
	case cov.Fingerprint() != fp:
		err = refusal(CodeStaleRead, t.virtual+" changed since it was read (read "+cov.Fingerprint()+", now "+fp+")",
			"read the current file in full with /r, then retry"+localized, fault.ActionRereadThenRetry, true)
		err.With("readFingerprint", cov.Fingerprint())
	default:
		missing := cov.Missing()
		detail := t.virtual + " was not read in full"
		hint := "read the rest with /r (follow next until complete), then retry" + localized
		if len(missing) > 0 {
			detail = fmt.Sprintf("%s: lines %d-%d of %d were not read", t.virtual, missing[0][0], missing[0][1], cov.Total())
			if len(missing) > 1 {
				detail += fmt.Sprintf(" (and %d more gaps)", len(missing)-1)
			}
			hint = fmt.Sprintf("read from line %d with /r (follow next until complete), then retry", missing[0][0]) + localized
			err = refusal(CodeReadIncomplete, detail, hint, fault.ActionRereadThenRetry, true)
			err.With("readFrom", missing[0][0])
			err.With("missingLines", missing[:min(len(missing), 16)])
		} else {
			err = refusal(CodeReadIncomplete, detail, hint, fault.ActionRereadThenRetry, true)
		}
	}
	err.With("path", t.virtual)
	err.With("fingerprint", fp)
	return err
}
