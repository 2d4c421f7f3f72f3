package opencode

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hubdev/hub/internal/inittrace"
)

// TestInitIsCheap: every hub start and every `hub status` loads this
// package, so its init must not build anything big. The argument checks
// used to be regexps whose counted repetitions compiled to ~700 KB and
// ~9,400 allocations at every start.
func TestInitIsCheap(t *testing.T) {
	c, err := inittrace.Measure("github.com/hubdev/hub/geturl/plugin/opencode")
	if err != nil {
		t.Fatal(err)
	}
	if c.Bytes > 64<<10 || c.Allocs > 1000 {
		t.Fatalf("package init allocates %d bytes in %d allocations; want ≤ 64 KiB and ≤ 1000", c.Bytes, c.Allocs)
	}
}

// shapeRefs are the exact forms the argument checks accept, as the
// regexps that defined them; built per test, not at init.
func shapeRefs() []struct {
	name string
	re   *regexp.Regexp
	is   func(string) bool
} {
	return []struct {
		name string
		re   *regexp.Regexp
		is   func(string) bool
	}{
		{"session", regexp.MustCompile(`^ses_[0-9A-Za-z]{1,64}$`), isSessionID},
		{"message", regexp.MustCompile(`^msg_[0-9A-Za-z]{1,64}$`), isMessageID},
		{"swarm", regexp.MustCompile(`^swm_[0-9A-Za-z]{1,64}$`), isSwarmID},
		{"request", regexp.MustCompile(`^(per|que)_[0-9A-Za-z]{1,64}$`), isRequestID},
		{"name", regexp.MustCompile(`^[0-9A-Za-z._@:-]{1,128}$`), isName},
		{"model", regexp.MustCompile(`^[0-9A-Za-z._@:-]{1,128}/[0-9A-Za-z._@:/+-]{1,200}$`), isModel},
	}
}

func TestShapesMatchTheirRegexps(t *testing.T) {
	inputs := []string{
		"", "ses_", "ses_1", "ses_" + strings.Repeat("a", 64), "ses_" + strings.Repeat("a", 65), "ses_a/b", "ses_a\n",
		"SES_1", "xses_1", "msg_01JABC", "swm_z", "per_1", "que_Z9", "pe_1", "per_", "per_é",
		"build", "a.b_c@d:e-f", strings.Repeat("n", 128), strings.Repeat("n", 129), "a b", "a/b", "a+b",
		"openai/gpt-5", "openai/", "/gpt", "a/b/c+d", "a:b/c@d", strings.Repeat("p", 128) + "/" + strings.Repeat("m", 200),
		strings.Repeat("p", 129) + "/m", "p/" + strings.Repeat("m", 201), "p//m", "p/m\n", "p/m%2f", "p\x00/m", "ses_\xff",
	}
	for _, r := range shapeRefs() {
		for _, s := range inputs {
			if got, want := r.is(s), r.re.MatchString(s); got != want {
				t.Errorf("%s(%q) = %v, the regexp says %v", r.name, s, got, want)
			}
		}
	}
}

func FuzzShapes(f *testing.F) {
	for _, s := range []string{"ses_1", "per_x", "build", "openai/gpt-5", "a/b/c", "p//m"} {
		f.Add(s)
	}
	refs := shapeRefs()
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range refs {
			if got, want := r.is(s), r.re.MatchString(s); got != want {
				t.Fatalf("%s(%q) = %v, the regexp says %v", r.name, s, got, want)
			}
		}
	})
}
