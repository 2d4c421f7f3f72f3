package companion

import (
	"testing"

	"github.com/hubdev/hub/geturl/route"
)

// BenchmarkLookup: what the companion adds to the data plane's token
// lookup, for a manual session and for a companion one, against the
// session table alone.
func BenchmarkLookup(b *testing.B) {
	h := newHarness(b)
	p := h.paired("laptop")
	bound := h.mustBind(p, "ro", "https://chat.example/c/1")
	manual, _ := h.mgr.NewSession("ro", "by hand")
	for name, tok := range map[string]string{"manual": h.readToken(manual.ID), "companion": h.readToken(bound.session)} {
		b.Run("table/"+name, func(b *testing.B) {
			for b.Loop() {
				if _, k, ok := h.mgr.Sessions().Lookup(tok); !ok || k != route.CapRead {
					b.Fatal("lookup")
				}
			}
		})
		b.Run("companion/"+name, func(b *testing.B) {
			for b.Loop() {
				if _, k, ok := h.svc.Lookup(tok); !ok || k != route.CapRead {
					b.Fatal("lookup")
				}
			}
		})
	}
}
