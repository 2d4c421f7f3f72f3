package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Limits on agent paths, mirroring Linux PATH_MAX and NAME_MAX so an
// over-long path is refused with a typed error before any system call.
const (
	MaxPathBytes = 4096
	MaxNameBytes = 255
	// maxLinks is the number of symlinks one resolution may follow (Linux's
	// own limit), so a loop ends in ErrSymlinkLoop.
	maxLinks = 40
)

// Path is a resolved agent path.
type Path struct {
	// Virtual is the "/project/..." spelling to show the agent: the cleaned
	// path as the agent named it, or for a native absolute path reaching the
	// project through an outside alias, the path of its realpath.
	Virtual string
	// Host is the path to operate on. ResolveExisting: the realpath.
	// ResolveNew: the realpath of the nearest existing ancestor joined with
	// the missing rest (equal to the realpath when the target exists).
	// ResolveLink: the realpath of the parent joined with the final name.
	Host string
	// Exists reports whether the target exists (always true for
	// ResolveExisting and ResolveLink).
	Exists bool
	// Symlink reports whether the final component, as named, is a symlink.
	Symlink bool
}

// ResolveExisting resolves p to an existing file or directory whose realpath
// is inside the scope. A native absolute path outside the root is judged by
// its realpath alone: an alias of the project, or of a file in it, is
// accepted however it reaches there.
func (s *Scope) ResolveExisting(p string) (Path, error) {
	if host, inside, err := s.candidate(p); err == nil && !inside {
		return s.resolveAlias(host)
	}
	host, link, inside, fi, err := s.lstatFinal(p)
	if err != nil {
		return Path{}, err
	}
	if fi == nil {
		return Path{Virtual: VirtualRoot, Host: s.root, Exists: true}, nil
	}
	real := link
	isLink := fi.Mode()&fs.ModeSymlink != 0
	if isLink {
		dest, missing, err := s.walk(link)
		if err != nil {
			return Path{}, err
		}
		if !s.rules.within(s.root, dest) {
			return Path{}, s.escape(inside)
		}
		if missing != "" {
			return Path{}, newErr(ErrNotFound)
		}
		real = dest
	} else if !s.rules.within(s.root, real) {
		return Path{}, s.escape(inside)
	}
	return Path{Virtual: s.virtual(host, real, inside), Host: real, Exists: true, Symlink: isLink}, nil
}

// resolveAlias resolves host, an absolute path lexically outside the root,
// to its realpath, which must exist inside the scope.
func (s *Scope) resolveAlias(host string) (Path, error) {
	dest, missing, err := s.walk(host)
	switch {
	case err != nil:
		return Path{}, err
	case !s.rules.within(s.root, dest):
		return Path{}, newErr(ErrOutsideScope)
	case missing != "":
		return Path{}, newErr(ErrNotFound)
	}
	fi, err := os.Lstat(host)
	if err != nil {
		return Path{}, classify(err)
	}
	return Path{Virtual: s.rules.virtual(s.root, dest), Host: dest, Exists: true, Symlink: fi.Mode()&fs.ModeSymlink != 0}, nil
}

// ResolveLink resolves p without following its final component: the parent
// must be an existing directory inside the scope and the final name must
// exist (it may be a symlink pointing anywhere, or dangling). Use it to
// inspect or remove a link itself.
func (s *Scope) ResolveLink(p string) (Path, error) {
	host, link, inside, fi, err := s.lstatFinal(p)
	if err != nil {
		return Path{}, err
	}
	if fi == nil {
		return Path{Virtual: VirtualRoot, Host: s.root, Exists: true}, nil
	}
	return Path{Virtual: s.virtual(host, link, inside), Host: link, Exists: true,
		Symlink: fi.Mode()&fs.ModeSymlink != 0}, nil
}

// ResolveNew resolves p as a target that may not exist yet: the realpath of
// its nearest existing ancestor must be inside the scope. Dangling symlinks
// on the way are followed, so Host is where a create would really land.
func (s *Scope) ResolveNew(p string) (Path, error) {
	host, inside, err := s.candidate(p)
	if err != nil {
		return Path{}, err
	}
	dest, missing, err := s.walk(host)
	if err != nil {
		return Path{}, err
	}
	if !s.rules.within(s.root, dest) {
		return Path{}, s.escape(inside)
	}
	real := dest
	if missing != "" {
		real = filepath.Join(dest, missing)
	}
	return Path{Virtual: s.virtual(host, real, inside), Host: real, Exists: missing == ""}, nil
}

// Allow widens what ResolveMutable accepts. Its zero value is the
// narrowest: give a caller more only for a session that holds the
// authority the field names.
type Allow struct {
	// Autorun accepts configuration that tools run on their own
	// (AutorunComponent). Changing it is running commands, so only a
	// session that may run commands anyway (one with the terminal) gets
	// it.
	Autorun bool
}

// ResolveMutable is ResolveNew for a path about to be changed: written,
// created, deleted, renamed from or renamed to.
//
// It refuses, with ErrVCSMetadata, version-control metadata: a path
// that, as named or as resolved (every symlink followed), has a
// component VCSComponent reports, or that lies in a directory git takes
// for a git directory (HEAD, objects/ and refs/ in it; the root
// included). Changing such a file can make the next git command in the
// project run anything (a core.fsmonitor in .git/config runs at every
// git status, which shell prompts and editors run on their own), so a
// session that may write files but not run commands would gain the
// terminal through it. Nothing allows it.
//
// Unless allow.Autorun, it also refuses, with ErrAutorunConfig,
// configuration that tools run on their own: a path that, as named or as
// resolved, AutorunComponent reports, or that lies where a symlink named
// so leads (one at the root, or directly in such a directory at the
// root). Changing such a file runs commands the next time an agent
// starts in the project or an editor opens it, for the same gain.
// Metadata is reported before configuration.
//
// Like every resolution it is a check, not a lock; the callers operate
// on the result through descriptors (see Open, and the mutation engine).
func (s *Scope) ResolveMutable(p string, allow Allow) (Path, error) {
	named := ""
	if host, inside, err := s.candidate(p); err == nil && inside {
		if rel, ok := s.Rel(host); ok {
			if _, vcs := VCSComponent(rel); vcs {
				return Path{}, newErr(ErrVCSMetadata)
			}
			named = rel
		}
	}
	r, err := s.ResolveNew(p)
	if err != nil {
		return Path{}, err
	}
	rel, ok := s.Rel(r.Host)
	if !ok {
		return Path{}, newErr(ErrOutsideScope)
	}
	if _, vcs := VCSComponent(rel); vcs {
		return Path{}, newErr(ErrVCSMetadata)
	}
	// Every existing directory from the root down to the target's parent.
	dir, rest := s.root, rel
	for {
		if gitDirShaped(dir) {
			return Path{}, newErr(ErrVCSMetadata)
		}
		if rest == "." {
			break
		}
		name, more, ok := strings.Cut(rest, "/")
		if !ok {
			break
		}
		dir, rest = filepath.Join(dir, name), more
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			break
		}
	}
	if !allow.Autorun {
		_, byName := AutorunComponent(named)
		_, resolved := AutorunComponent(rel)
		if byName || resolved || s.autorunLink(r.Host) {
			return Path{}, newErr(ErrAutorunConfig)
		}
	}
	return r, nil
}

// lstatFinal begins ResolveExisting and ResolveLink: p's parent must be
// an existing directory inside the scope, and p's final name is looked at
// without following it (link is that name under the parent's realpath).
// fi is nil when p is the root itself.
func (s *Scope) lstatFinal(p string) (host, link string, inside bool, fi os.FileInfo, err error) {
	host, inside, err = s.candidate(p)
	if err != nil || host == s.root {
		return host, host, inside, nil, err
	}
	parent, err := s.existingDir(filepath.Dir(host), inside)
	if err != nil {
		return "", "", false, nil, err
	}
	link = filepath.Join(parent, filepath.Base(host))
	if fi, err = os.Lstat(link); err != nil {
		return "", "", false, nil, classify(err)
	}
	return host, link, inside, fi, nil
}

// existingDir returns the realpath of dir, which must exist inside the scope.
func (s *Scope) existingDir(dir string, inside bool) (string, error) {
	dest, missing, err := s.walk(dir)
	if err != nil {
		return "", err
	}
	if !s.rules.within(s.root, dest) {
		return "", s.escape(inside)
	}
	if missing != "" {
		return "", newErr(ErrNotFound)
	}
	return dest, nil
}

func (s *Scope) escape(inside bool) error {
	if inside {
		return newErr(ErrSymlinkEscape)
	}
	return newErr(ErrOutsideScope)
}

func (s *Scope) virtual(host, real string, inside bool) string {
	if inside {
		return s.rules.virtual(s.root, host)
	}
	return s.rules.virtual(s.root, real)
}

// candidate turns an agent path into a clean absolute host path, before any
// symlink is looked at. inside reports whether that path is lexically in the
// root (always true for relative and virtual paths, which may not climb out).
// The scope's rules judge the path's shape (see rules.agent).
func (s *Scope) candidate(p string) (host string, inside bool, err error) {
	if p == "" || strings.IndexByte(p, 0) >= 0 {
		return "", false, newErr(ErrInvalidPath)
	}
	if len(p) > MaxPathBytes {
		return "", false, newErr(ErrPathTooLong)
	}
	c, abs, err := s.rules.agent(p)
	if err != nil {
		return "", false, err
	}
	if abs {
		return c, s.rules.within(s.root, c), nil
	}
	host = filepath.Join(s.root, filepath.FromSlash(c))
	if len(host) > MaxPathBytes {
		return "", false, newErr(ErrPathTooLong)
	}
	return host, true, nil
}

// walk resolves the absolute clean path p component by component, following
// every symlink (at most maxLinks). When a component does not exist it stops:
// dest is then the realpath of the nearest existing ancestor and missing the
// clean remainder (which may not climb with ".."). Paths under the root skip
// the root's own components, which are canonical by construction.
func (s *Scope) walk(p string) (dest, missing string, err error) {
	sep := string(filepath.Separator)
	dest, rest := s.start(p)
	links := 0
	for {
		rest = strings.TrimLeft(rest, sep)
		if rest == "" {
			return dest, "", nil
		}
		name := rest
		if i := strings.Index(rest, sep); i >= 0 {
			name, rest = rest[:i], rest[i:]
		} else {
			rest = ""
		}
		switch name {
		case ".":
			continue
		case "..":
			dest = filepath.Dir(dest)
			continue
		}
		if err := s.rules.hostName(name); err != nil {
			return "", "", err
		}
		next := filepath.Join(dest, name)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			left := filepath.Clean(name + rest)
			if left == ".." || strings.HasPrefix(left, ".."+sep) || strings.Contains(left, sep+".."+sep) || strings.HasSuffix(left, sep+"..") {
				return "", "", newErr(ErrNotFound)
			}
			return dest, left, nil
		}
		var errno syscall.Errno
		if errors.As(err, &errno) && errno == syscall.ENOTDIR {
			return "", "", newErr(ErrNotDirectory)
		}
		if err != nil {
			return "", "", classify(err)
		}
		if opaque(fi) {
			// A reparse point that is no symlink (a junction, a mount
			// point): where it leads is not a path to judge.
			return "", "", newErr(ErrSymlinkEscape)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if !fi.IsDir() && strings.Trim(rest, sep) != "" {
				return "", "", newErr(ErrNotDirectory)
			}
			dest = next
			continue
		}
		links++
		if links > maxLinks {
			return "", "", newErr(ErrSymlinkLoop)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", "", classify(err)
		}
		target, abs, ok := s.rules.linkTarget(dest, target)
		if !ok {
			return "", "", newErr(ErrSymlinkEscape)
		}
		if abs {
			dest, target = s.start(filepath.Clean(target))
		}
		rest = target + sep + rest
	}
}

// start splits p into an already-canonical prefix and the rest to resolve:
// the root and what follows it, or p's volume root ("/", `C:\`) and the
// rest.
func (s *Scope) start(p string) (dest, rest string) {
	if s.rules.within(s.root, p) {
		return s.root, p[len(s.root):]
	}
	vol := filepath.VolumeName(p)
	return vol + string(filepath.Separator), p[len(vol):]
}
