package search

// SkipDirs are directory names whose contents find and grep do not enter:
// version-control metadata, dependency trees, virtualenvs, caches and build
// trees that are large, generated and rarely what an agent looks for. The
// rule is by name at any depth, for directories only; a search that starts
// inside such a directory (path=node_modules/pkg) still searches it. Build
// output with common names (dist, build, out) is not skipped: it is often
// small and sometimes exactly what is wanted. .gitignore files are not
// consulted: the same rule applies in every project, with or without git.
var SkipDirs = []string{
	".git", ".hg", ".svn", ".jj", ".bzr",
	"node_modules", "bower_components", ".pnpm-store", ".yarn",
	".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
	".next", ".nuxt", ".svelte-kit", ".turbo", ".parcel-cache", ".angular", ".cache",
	".gradle", ".terraform", "target",
}

var skipSet = func() map[string]bool {
	m := make(map[string]bool, len(SkipDirs))
	for _, d := range SkipDirs {
		m[d] = true
	}
	return m
}()
