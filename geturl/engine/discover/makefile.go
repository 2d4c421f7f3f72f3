package discover

import (
	"regexp"
	"strings"
)

func (d *Discoverer) makefile(p *Project) {
	// GNU make's own search order.
	for _, name := range []string{"GNUmakefile", "makefile", "Makefile"} {
		if !p.has(name) {
			continue
		}
		data, ok := d.readRootFile(name)
		if !ok {
			d.warn(p, name+" could not be read")
			return
		}
		targets, truncated := makeTargets(data)
		p.MakeTargets = targets
		p.Truncated = p.Truncated || truncated
		return
	}
}

// targetLine matches a rule line: target names, then ":" or "::" not
// starting an assignment (":=", "::=", ":::=").
var targetLine = regexp.MustCompile(`^([A-Za-z0-9_][A-Za-z0-9_./+-]*(?:[ \t]+[A-Za-z0-9_][A-Za-z0-9_./+-]*)*)[ \t]*::?(?:[^=:]|$)`)

// makeTargets lists explicit target names in file order: no special
// targets (.PHONY), no patterns (%), no variables ($), nothing inside
// define…endef or recipes. A simple reading, not make's.
func makeTargets(data []byte) ([]string, bool) {
	var out []string
	seen := map[string]bool{}
	inDefine := false
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "define ") || trimmed == "define":
			inDefine = true
			continue
		case trimmed == "endef":
			inDefine = false
			continue
		case inDefine, strings.HasPrefix(line, "\t"), strings.HasPrefix(trimmed, "#"):
			continue
		}
		m := targetLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, t := range strings.Fields(m[1]) {
			if seen[t] {
				continue
			}
			if len(out) == MaxMakeTargets {
				return out, true
			}
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, false
}
