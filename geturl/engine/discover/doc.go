// Package discover is the engine behind /p: what a project is built with
// and what the machine offers to build it, without spending a mutation.
//
// It reports which of a fixed list of executables (Tools) are on PATH —
// presence and, for the ones that answer quickly, a version number, never
// their location (it would show home directories); which project markers
// (Markers) exist at the project root; the package.json name, package
// manager and scripts (in file order); the go.mod module path and Go
// version; and the Makefile's target names.
//
// Version probes run "<tool> --version" (or "go version") directly, not
// through a shell, in the root directory rather than the project — so
// project-local version-manager configuration (which for some managers
// can run scripts) is never loaded by a read-only call — with the hub's
// environment without its secrets (package childenv) and a short
// timeout each, in parallel, and cached for the life of the process per
// executable (path, size and mtime). Only the version number is kept from
// their output. Slow JVM launchers (java, mvn, gradle) are reported by
// presence only. Every list is bounded.
package discover
