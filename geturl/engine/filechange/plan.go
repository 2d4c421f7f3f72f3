package filechange

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/hubdev/hub/geturl/engine/files"
	"github.com/hubdev/hub/geturl/fault"
)

// vfile is one file a patch touches, as the preflight sees it: what is on
// disk, and what the sections so far have made of it. Sections run in
// order against these states, so a patch may add a file and then update
// it, or delete a file and add another in its place; the commit then
// performs only the net change of each file.
type vfile struct {
	t target // as first named

	onDisk   fs.FileMode // type bits of what is on disk; fs.ModeIrregular when nothing is
	diskPerm fs.FileMode
	exists   bool // a regular file is there on disk
	orig     string
	loaded   bool // orig holds the bytes on disk

	// After the sections so far.
	now         bool   // a regular file exists
	content     string // its bytes, when known
	known       bool
	defaultPerm bool // created by the patch: the umask decides its mode
	perm        fs.FileMode
	dirty       bool
}

const absent = fs.ModeIrregular

type planner struct {
	e     *Engine
	f     *fsys
	lim   Limits
	m     matcher
	files map[string]*vfile
	order []*vfile
}

func newPlanner(e *Engine, f *fsys, lim Limits) *planner {
	return &planner{e: e, f: f, lim: lim, m: matcher{budget: lim.MaxMatchWork}, files: make(map[string]*vfile)}
}

// get returns the state of the file at t, looking at the disk the first
// time.
func (pl *planner) get(t target) (*vfile, *fault.Error) {
	if v := pl.files[t.host]; v != nil {
		return v, nil
	}
	v := &vfile{t: t, onDisk: absent}
	fi, err := pl.f.lstat(t.rel)
	switch {
	case err == nil:
		v.onDisk = fi.Mode().Type()
		if fi.Mode().IsRegular() {
			v.exists, v.now, v.diskPerm, v.perm = true, true, fi.Mode().Perm(), fi.Mode().Perm()
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return nil, ioFailure(t.virtual, "read", err)
	}
	pl.files[t.host] = v
	pl.order = append(pl.order, v)
	return v, nil
}

// regular refuses a target that is something other than a regular file.
func (v *vfile) regular() *fault.Error {
	switch {
	case v.onDisk == absent || v.onDisk.IsRegular():
		return nil
	case v.onDisk.IsDir():
		return refusal(CodeIsDirectory, v.t.virtual+" is a directory", "apply_patch adds, updates and deletes files; name a file", fault.ActionCorrectRequest, true).With("path", v.t.virtual)
	}
	return refusal(CodeNotRegularFile, v.t.virtual+" is not a regular file", "only regular files can be patched", "", false).With("path", v.t.virtual)
}

// load reads the file's current bytes from disk if the patch has not
// already decided them.
func (pl *planner) load(v *vfile) *fault.Error {
	if v.known {
		return nil
	}
	data, _, err := pl.f.readRegular(v.t.rel, pl.lim.MaxFileBytes)
	if err != nil {
		return fileFailure(v.t.virtual, "read", err, pl.lim.MaxFileBytes)
	}
	v.orig, v.loaded = string(data), true
	v.content, v.known = v.orig, true
	return nil
}

// preflight runs every section against the file states, touching nothing
// on disk, and returns the per-section results.
func (pl *planner) preflight(p *Patch) ([]PatchFileResult, *fault.Error) {
	out := make([]PatchFileResult, len(p.Files))
	for i := range p.Files {
		fp := &p.Files[i]
		r, err := pl.section(fp)
		if err != nil {
			err.Detail = fmt.Sprintf("%s (section %d, patch line %d)", err.Detail, i+1, fp.Line)
			return nil, err.With("section", i+1).With("patchLine", fp.Line)
		}
		out[i] = r
	}
	return out, nil
}

func (pl *planner) section(fp *FilePatch) (PatchFileResult, *fault.Error) {
	res := PatchFileResult{Op: string(fp.Op)}
	t, err := pl.e.resolve(fp.Path)
	if err != nil {
		return res, err
	}
	res.Path = t.virtual
	v, err := pl.get(t)
	if err != nil {
		return res, err
	}
	if err := v.regular(); err != nil {
		return res, err
	}
	switch fp.Op {
	case OpAdd:
		if v.now {
			return res, refusal(CodeFileExists, "Add File "+t.virtual+": the file exists",
				"change it with an Update File section, or delete it first with Delete File", fault.ActionCorrectRequest, true).With("path", t.virtual)
		}
		if int64(len(fp.Content)) > pl.lim.MaxFileBytes {
			return res, refusal(CodeContentTooLarge, "Add File "+t.virtual+": more than "+sizeText(pl.lim.MaxFileBytes), "", "", false).With("path", t.virtual)
		}
		v.now, v.content, v.known, v.defaultPerm, v.dirty = true, fp.Content, true, true, true
		res.BytesWritten, res.Fingerprint = len(fp.Content), files.Fingerprint([]byte(fp.Content))

	case OpDelete:
		if !v.now {
			return res, notInPatch(t.virtual, "Delete File")
		}
		if v.exists && pl.e.namedSymlink(fp.Path) {
			return res, symlinkRefusal(t.virtual, "Delete File")
		}
		if v.known {
			res.PreviousFingerprint = files.Fingerprint([]byte(v.content))
		}
		v.now, v.content, v.known, v.dirty = false, "", true, true

	case OpUpdate:
		if !v.now {
			return res, notInPatch(t.virtual, "Update File")
		}
		if err := pl.load(v); err != nil {
			return res, err
		}
		next, hunks, herr := applyHunks(&pl.m, v.content, fp.Hunks)
		if herr != nil {
			return res, hunkFailure(t.virtual, fp, herr)
		}
		if int64(len(next)) > pl.lim.MaxFileBytes {
			return res, refusal(CodeContentTooLarge, "Update File "+t.virtual+": the result is larger than "+sizeText(pl.lim.MaxFileBytes), "", "", false).With("path", t.virtual)
		}
		res.PreviousFingerprint = files.Fingerprint([]byte(v.content))
		res.BytesWritten, res.Fingerprint, res.Hunks = len(next), files.Fingerprint([]byte(next)), hunks
		dst := v
		if fp.MoveTo != "" {
			t2, err := pl.e.resolve(fp.MoveTo)
			if err != nil {
				return res, err.With("moveTo", true)
			}
			if t2.host != t.host {
				if v.exists && pl.e.namedSymlink(fp.Path) {
					return res, symlinkRefusal(t.virtual, "Move to")
				}
				if dst, err = pl.get(t2); err != nil {
					return res, err
				}
				if err := dst.regular(); err != nil {
					return res, err
				}
				if dst.now {
					return res, refusal(CodeFileExists, "Move to "+t2.virtual+": the destination exists",
						"move to a new name, or delete the destination first with Delete File", fault.ActionCorrectRequest, true).With("path", t2.virtual)
				}
				dst.perm, dst.defaultPerm = v.perm, v.defaultPerm // a moved script stays executable
				dst.now = true
				v.now, v.content, v.known, v.dirty = false, "", true, true
				res.MovedTo = t2.virtual
			}
		}
		dst.content, dst.known, dst.dirty = next, true, true
	}
	return res, nil
}

func notInPatch(virtual, op string) *fault.Error {
	hint := "check the path (/f finds files by name)"
	if op == "Update File" {
		hint += "; to create a file use an Add File section"
	}
	return refusal(CodePatchFileNotFound, op+" "+virtual+": the file does not exist", hint, fault.ActionCorrectRequest, true).With("path", virtual)
}

func symlinkRefusal(virtual, op string) *fault.Error {
	return refusal(CodeNotRegularFile, op+" "+virtual+": the path is a symlink; apply_patch deletes and moves regular files only",
		"name the file the link points to, or use the terminal (/x) for links", "", false).With("path", virtual)
}

// hunkFailure reports an update hunk that does not apply.
func hunkFailure(virtual string, fp *FilePatch, err error) *fault.Error {
	var he *hunkError
	if !errors.As(err, &he) {
		return refusal(CodePatchHunkNotFound, "Update File "+virtual+": "+err.Error(), "", fault.ActionRereadThenRetry, true)
	}
	if he.tooMuch {
		return refusal(CodePatchTooComplex, "Update File "+virtual+": "+he.reason, "give each hunk more distinctive context lines, or split the patch", fault.ActionCorrectRequest, true).With("path", virtual)
	}
	e := refusal(CodePatchHunkNotFound, fmt.Sprintf("Update File %s, hunk %d (patch line %d): %s", virtual, he.hunk+1, he.line, he.reason),
		"read the file again around that place and copy the context and removed lines exactly; nothing was changed", fault.ActionRereadThenRetry, true)
	e.With("path", virtual).With("hunk", he.hunk+1).With("hunkLine", he.line)
	if he.want != "" {
		e.With("expected", he.want)
	}
	return e
}
