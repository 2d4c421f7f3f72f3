package mutation_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hubdev/hub/geturl/internal/corpus"
	"github.com/hubdev/hub/geturl/transport"
)

// TestCorpusThroughRoutes sends every text of the transport's nasty-string
// corpus through real GET URLs against the gateway — /w (raw tail and
// content=), /w from a staged blob of two /s chunks, /e (old and new by
// parameter, new by raw tail), /a Add File — and requires the exact bytes
// on disk.
func TestCorpusThroughRoutes(t *testing.T) {
	e := newEnv(t, rw, nil)
	enc := transport.Encode
	const before, after = "«B»", "«E»"
	for i, c := range corpus.Cases(t) {
		t.Run(fmt.Sprintf("%02d %s", i, c.Name), func(t *testing.T) {
			e.t = t
			check := func(how, rel, want string) {
				t.Helper()
				if got := e.file(rel); got != want {
					t.Errorf("%s: on disk %q, want %q", how, got, want)
				}
			}
			dir := fmt.Sprintf("c%02d/", i)

			e.done(e.m + "/w?path=" + dir + "raw.txt&wait=1500&raw=" + enc(c.Text))
			check("/w raw", dir+"raw.txt", c.Text)
			e.done(e.m + "/w?path=" + dir + "param.txt&wait=1500&content=" + enc(c.Text))
			check("/w content=", dir+"param.txt", c.Text)

			// Two chunks cut on a UTF-8 boundary, sent out of order.
			cut := len(c.Text) / 2
			for cut > 0 && !utf8.RuneStart(c.Text[cut]) {
				cut--
			}
			blob := fmt.Sprintf("corpus%02d", i)
			e.ok(e.m + "/s?blob=" + blob + "&i=1&count=2&raw=" + enc(c.Text[cut:]))
			if a := e.ok(e.m + "/s?blob=" + blob + "&i=0&count=2&raw=" + enc(c.Text[:cut])); !a.Complete {
				t.Fatalf("%s", a.raw)
			}
			e.done(e.m + "/w?path=" + dir + "staged.txt&blob=" + blob + "&count=2&wait=1500")
			check("/w blob", dir+"staged.txt", c.Text)

			e.done(e.m + "/w?path=" + dir + "edit.txt&wait=1500&raw=" + enc(before+"<<X>>"+after))
			e.done(e.m + "/e?path=" + dir + "edit.txt&old=%3C%3CX%3E%3E&wait=1500&raw=" + enc(c.Text))
			check("/e new by raw", dir+"edit.txt", before+c.Text+after)
			if c.Text != "" {
				e.done(e.m + "/e?path=" + dir + "edit.txt&old=" + enc(c.Text) + "&new=" + enc("Y") + "&wait=1500")
				check("/e old by param", dir+"edit.txt", before+"Y"+after)
			}

			e.done(e.m + "/a?wait=1500&raw=" + enc("*** Begin Patch\n*** Add File: "+dir+"add.txt\n"+addLines(c.Text)+"*** End Patch\n"))
			check("/a add", dir+"add.txt", c.Text)
		})
	}
}

// addLines spells text as Add File lines, byte for byte.
func addLines(text string) string {
	if text == "" {
		return ""
	}
	var b strings.Builder
	rest := text
	for rest != "" {
		i := strings.IndexByte(rest, '\n')
		if i < 0 {
			b.WriteString("+" + rest + "\n\\ No newline at end of file\n")
			break
		}
		b.WriteString("+" + rest[:i+1])
		rest = rest[i+1:]
	}
	return b.String()
}
