package discover

import (
	"strconv"
	"strings"
)

// GoMod is what /p reports of go.mod.
type GoMod struct {
	Module    string `json:"module"`
	Go        string `json:"go,omitempty"`
	Toolchain string `json:"toolchain,omitempty"`
}

func (d *Discoverer) goMod(p *Project) {
	if !p.has("go.mod") {
		return
	}
	data, ok := d.readRootFile("go.mod")
	if !ok {
		d.warn(p, "go.mod could not be read")
		return
	}
	if m := parseGoMod(data); m.Module != "" {
		p.GoMod = &m
	} else {
		d.warn(p, "go.mod has no module line")
	}
}

// parseGoMod reads the module, go and toolchain directives (never inside
// a block) of a go.mod; it is not a full go.mod parser.
func parseGoMod(data []byte) GoMod {
	var m GoMod
	for line := range strings.Lines(string(data)) {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		v := f[1]
		if u, err := strconv.Unquote(v); err == nil {
			v = u
		}
		v = clip(v, MaxCommandLen)
		switch f[0] {
		case "module":
			m.Module = v
		case "go":
			m.Go = v
		case "toolchain":
			m.Toolchain = v
		}
	}
	return m
}
