package aiui

import (
	"net/http"

	"github.com/hubdev/hub/hub"
)

// Sender kinds: who sent a prompt, as far as the backend can tell. Every
// delivered prompt carries one in its notification meta (MetaSender), set
// by the backend after everything the sender supplied, so no sender can
// write it — only choose how it connects.
const (
	// SenderKeyed is a POST /prompt that carried this backend's per-start
	// prompt key, which only a process able to read the 0600 control file
	// holds: the user who started the backend (or root).
	SenderKeyed = "keyed"
	// SenderPage is a /ws socket or POST /prompt whose Origin is on the
	// allow-list: no other web site sent it, but a local process can
	// send any Origin it likes.
	SenderPage = "page"
	// SenderLocal sent neither an Origin nor the key: a local process, any
	// local user's.
	SenderLocal = "local"
)

// Meta keys of a prompt's provenance. Whatever a prompt's meta held under
// them before is replaced.
const (
	MetaSender       = "sender"
	MetaSenderOrigin = "sender_origin"
	MetaProvenance   = "provenance"
)

// Sender is a prompt's provenance.
type Sender struct {
	Kind   string // SenderKeyed, SenderPage or SenderLocal
	Origin string // the normalised, allow-listed Origin (SenderPage)
}

// senderOf is the provenance of a request the browser gate has passed
// without a key: a page when it carried an (allowed) Origin, else a local
// process.
func senderOf(h http.Header) Sender {
	if o, ok := hub.NormalizeOrigin(h.Get("Origin")); ok {
		return Sender{Kind: SenderPage, Origin: o}
	}
	return Sender{Kind: SenderLocal}
}

// Describe is the provenance in words, for the agent.
func (s Sender) Describe() string {
	switch s.Kind {
	case SenderKeyed:
		return "from a local process holding this backend's per-start prompt key (only the user who started the backend can read it)"
	case SenderPage:
		return "from a browser page at " + s.Origin + " (Origin checked: no other web site can send this; a local process can still claim this Origin)"
	}
	return "from a local process without an Origin or the prompt key (unverified: any local user can send this)"
}

// stamp writes the provenance into meta, replacing anything the sender
// put under its keys.
func (s Sender) stamp(meta map[string]string) {
	delete(meta, MetaSenderOrigin)
	meta[MetaSender] = s.Kind
	meta[MetaProvenance] = s.Describe()
	if s.Kind == SenderPage {
		meta[MetaSenderOrigin] = s.Origin
	}
}

// stampSocket stamps a prompt from a /ws socket with the provenance of
// its upgrade request (its headers): /ws has no key, so a page or a local
// process.
func stampSocket(meta map[string]string, upgrade http.Header) {
	senderOf(upgrade).stamp(meta)
}
