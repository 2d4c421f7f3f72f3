package files

import (
	"errors"
	"os"
	"time"

	"github.com/hubdev/hub/geturl/engine/sandbox"
)

// Info is the /t answer for one path.
type Info struct {
	Path string `json:"path"`
	// Kind is file, dir, symlink or other.
	Kind string `json:"kind"`
	// Size and ModTime (RFC 3339, UTC) are the entry's own, or for a
	// symlink whose target is inside the scope, the target's.
	Size    int64  `json:"size"`
	ModTime string `json:"mtime"`
	// Target is a symlink's target as a virtual path, when inside the
	// scope; TargetKind is its kind, or "outside" (never named) or
	// "missing" for a dangling link.
	Target     string `json:"target,omitempty"`
	TargetKind string `json:"targetKind,omitempty"`
}

// Stat describes path. A symlink inside the scope is described as a link
// even when it points outside; its target is then not revealed.
//
// The entry and a link's target are looked at through a descriptor of the
// project root (os.Root), never by host path: resolution approves a path,
// and a directory on it swapped for a symlink to outside after that must
// not make the lstat follow the link out (os.Root refuses to).
func (r *Reader) Stat(path string) (Info, error) {
	p, err := r.Scope.ResolveLink(path)
	if err != nil {
		return Info{}, statError(err)
	}
	rel, ok := r.Scope.Rel(p.Host)
	if !ok {
		return Info{}, statError(&sandbox.Error{Kind: sandbox.ErrOutsideScope, Code: "path_outside_scope"})
	}
	root, err := os.OpenRoot(r.Scope.Root())
	if err != nil {
		return Info{}, statError(err)
	}
	defer root.Close()
	fi, err := root.Lstat(rel)
	if err != nil {
		return Info{}, statError(err)
	}
	info := Info{Path: p.Virtual, Kind: kindOf(fi.Mode()), Size: fi.Size(), ModTime: mtime(fi)}
	if fi.IsDir() {
		info.Size = 0
	}
	if !p.Symlink {
		return info, nil
	}
	t, err := r.Scope.ResolveExisting(path)
	switch {
	case errors.Is(err, sandbox.ErrOutsideScope):
		info.TargetKind = "outside"
	case err != nil:
		info.TargetKind = "missing"
	default:
		info.Target = r.Scope.Virtual(t.Host)
		if trel, ok := r.Scope.Rel(t.Host); ok {
			if ti, err := root.Stat(trel); err == nil {
				info.TargetKind, info.Size, info.ModTime = kindOf(ti.Mode()), ti.Size(), mtime(ti)
				if ti.IsDir() {
					info.Size = 0
				}
			}
		}
	}
	return info, nil
}

func mtime(fi os.FileInfo) string { return fi.ModTime().UTC().Format(time.RFC3339Nano) }

// statError keeps typed sandbox errors and turns OS errors into agent-safe
// ones (an *os.PathError names the host path).
func statError(err error) error {
	if sandbox.Code(err) != "" {
		return err
	}
	return pathError(err)
}
