package hub

import "runtime"

// Unavailable lists, in plain words, what the hub does on Linux but
// cannot do on this OS, for `hub status` to say rather than silently
// differ. Empty on Linux.
func Unavailable() []string { return UnavailableOn(runtime.GOOS) }

// UnavailableOn is Unavailable for the OS goos (runtime.GOOS values).
func UnavailableOn(goos string) []string {
	hidden := "memory hiding: the hub cannot make itself undumpable, so your other programs can read its memory and environment " +
		"(Linux's PR_SET_DUMPABLE has no equivalent here)"
	switch goos {
	case "linux":
		return nil
	case "windows":
		return []string{
			hidden,
			"signals: `hub stop` asks the hub to stop only through its control endpoint; if that does not answer, it terminates the verified process at once (no SIGTERM)",
		}
	case "darwin":
		return []string{hidden}
	default:
		return []string{
			hidden,
			"process identity: `hub stop` and `hub status` cannot tell which process holds the hub's lock, so they do not trust a running hub",
		}
	}
}
