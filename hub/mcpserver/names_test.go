package mcpserver

import (
	"regexp"
	"strings"
	"testing"
)

var portable = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestPrefix(t *testing.T) {
	long := strings.Repeat("x", 80)
	cases := []struct{ in, want string }{
		{"scene.describe", "stitchslop_scene_describe"},
		{"render", "stitchslop_render"},
		{"a-b_c", "stitchslop_a-b_c"},
		{"über/x y", "stitchslop__ber_x_y"}, // one rune, one _
		{long, hashedName("stitchslop_"+long, long)},
	}
	name := Prefix("stitchslop_")
	for _, tc := range cases {
		got := name(tc.in)
		if got != tc.want {
			t.Errorf("Prefix(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !portable.MatchString(got) {
			t.Errorf("%q is not a portable tool name", got)
		}
	}
}

func TestHashedName(t *testing.T) {
	a, b := hashedName("p_a_b", "a.b"), hashedName("p_a_b", "a_b")
	if a == b || a != hashedName("p_a_b", "a.b") {
		t.Fatalf("not distinct or not deterministic: %q %q", a, b)
	}
	if long := hashedName(strings.Repeat("n", 200), "o"); len(long) != MaxPortableName || !portable.MatchString(long) {
		t.Fatalf("hashed long name %q", long)
	}
}
