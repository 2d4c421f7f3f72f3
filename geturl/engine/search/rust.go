package search

import (
	"fmt"
	"regexp/syntax"
	"strings"
	"unicode"
)

// toRust prints a parsed Go regexp in the syntax of Rust's regex crate (what
// rg runs) so that both engines select the same lines. Go and Rust agree on
// most syntax but not on meaning: Rust's \w, \d, \s and \b are Unicode-aware
// where Go's are ASCII, so nothing is printed as written. Every class is
// printed as explicit code point ranges (surrogates removed, the line break
// too, as rg does), \b and \B as their ASCII forms, case folding as (?i:…)
// around literals, and every construct as its own group so precedence
// cannot shift. ok is false for what Rust cannot express (a class that is
// empty once the line break is gone); the Go engine then runs instead.
func toRust(re *syntax.Regexp) (string, bool) {
	var b strings.Builder
	if !rust(&b, re) {
		return "", false
	}
	return b.String(), true
}

func rust(b *strings.Builder, re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpNoMatch:
		return false
	case syntax.OpEmptyMatch:
		b.WriteString(`(?:)`)
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			b.WriteString(`(?i:`)
		} else {
			b.WriteString(`(?:`)
		}
		for _, r := range re.Rune {
			rustRune(b, r)
		}
		b.WriteString(`)`)
	case syntax.OpCharClass:
		ranges := classRanges(re.Rune)
		if len(ranges) == 0 {
			return false
		}
		b.WriteString(`[`)
		for i := 0; i < len(ranges); i += 2 {
			rustRune(b, ranges[i])
			if ranges[i+1] != ranges[i] {
				b.WriteString(`-`)
				rustRune(b, ranges[i+1])
			}
		}
		b.WriteString(`]`)
	case syntax.OpAnyCharNotNL:
		b.WriteString(`.`)
	case syntax.OpAnyChar:
		b.WriteString(`(?s:.)`)
	case syntax.OpBeginLine, syntax.OpBeginText:
		// rg matches one line at a time, like the Go engine, so the start
		// of the text is the start of the line.
		b.WriteString(`(?m:^)`)
	case syntax.OpEndLine, syntax.OpEndText:
		b.WriteString(`(?m:$)`)
	case syntax.OpWordBoundary:
		b.WriteString(`(?-u:\b)`)
	case syntax.OpNoWordBoundary:
		b.WriteString(`(?-u:\B)`)
	case syntax.OpCapture:
		return group(b, re.Sub[0], "")
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		op := map[syntax.Op]string{syntax.OpStar: "*", syntax.OpPlus: "+", syntax.OpQuest: "?"}[re.Op]
		return group(b, re.Sub[0], op+lazy(re))
	case syntax.OpRepeat:
		rep := fmt.Sprintf("{%d,%d}", re.Min, re.Max)
		switch {
		case re.Max == -1:
			rep = fmt.Sprintf("{%d,}", re.Min)
		case re.Max == re.Min:
			rep = fmt.Sprintf("{%d}", re.Min)
		}
		return group(b, re.Sub[0], rep+lazy(re))
	case syntax.OpConcat:
		b.WriteString(`(?:`)
		for _, sub := range re.Sub {
			if !rust(b, sub) {
				return false
			}
		}
		b.WriteString(`)`)
	case syntax.OpAlternate:
		b.WriteString(`(?:`)
		for i, sub := range re.Sub {
			if i > 0 {
				b.WriteString(`|`)
			}
			if !rust(b, sub) {
				return false
			}
		}
		b.WriteString(`)`)
	default:
		return false
	}
	return true
}

func group(b *strings.Builder, sub *syntax.Regexp, suffix string) bool {
	b.WriteString(`(?:`)
	if !rust(b, sub) {
		return false
	}
	b.WriteString(`)`)
	b.WriteString(suffix)
	return true
}

func lazy(re *syntax.Regexp) string {
	if re.Flags&syntax.NonGreedy != 0 {
		return "?"
	}
	return ""
}

// rustRune prints one code point: ASCII letters and digits as themselves,
// everything else as a \x{…} escape, which Rust reads the same inside and
// outside classes.
func rustRune(b *strings.Builder, r rune) {
	if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
		b.WriteRune(r)
		return
	}
	fmt.Fprintf(b, `\x{%X}`, r)
}

// classRanges returns Go's class ranges without surrogates (not code points
// in Rust) and without the line break (never inside a line).
func classRanges(in []rune) []rune {
	out := make([]rune, 0, len(in)+4)
	add := func(lo, hi rune) {
		if lo <= hi {
			out = append(out, lo, hi)
		}
	}
	for i := 0; i+1 < len(in); i += 2 {
		lo, hi := in[i], in[i+1]
		for _, cut := range [][2]rune{{'\n', '\n'}, {0xD800, 0xDFFF}} {
			if lo <= cut[1] && hi >= cut[0] {
				add(lo, cut[0]-1)
				lo = cut[1] + 1
			}
		}
		add(lo, hi)
	}
	return out
}
