package tools

import (
	"sort"
	"strings"
)

// touch re-arms the debounce timer. Caller holds mu.
func (d *Directory) touch() {
	if d.closed || d.OnChange == nil {
		return
	}
	wait := d.Debounce
	if wait <= 0 {
		wait = DefaultDebounce
	}
	if d.timer == nil {
		d.timer = d.Guard.AfterFunc("page tools debounce", wait, d.fire)
		return
	}
	d.timer.Reset(wait)
}

// signature is ns|hash|active per registration, sorted — deliberately
// without the connection id, so a reload's close-plus-reconnect that
// restores an identical set nets to nothing. Caller holds mu.
func (d *Directory) signature(regs []Registration) string {
	parts := make([]string, len(regs))
	for i, r := range regs {
		a := ""
		if r.ActiveTab {
			a = "active"
		}
		parts[i] = r.NS + "|" + r.Hash + "|" + a
	}
	sort.Strings(parts)
	return strings.Join(parts, "\n")
}

func (d *Directory) fire() {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	regs := d.list()
	sig := d.signature(regs)
	if sig == d.lastSig {
		d.mu.Unlock()
		return
	}
	d.lastSig = sig
	cb := d.OnChange
	d.mu.Unlock()
	cb(Change{Text: ChangeText(regs), Registrations: regs})
}

// ChangeText is the terse channel push: `page tools changed: ns/name, …
// (active tab: title|url)`.
func ChangeText(regs []Registration) string {
	var names []string
	active := ""
	for _, r := range regs {
		for _, t := range r.Tools {
			names = append(names, r.NS+"/"+t.Name)
		}
		if r.ActiveTab && active == "" {
			switch {
			case r.Tab != nil && r.Tab.Title != "":
				active = r.Tab.Title
			case r.Tab != nil && r.Tab.URL != "":
				active = r.Tab.URL
			default:
				active = r.URL
			}
		}
	}
	s := "page tools changed: "
	if len(names) == 0 {
		s += "none"
	} else {
		s += strings.Join(names, ", ")
	}
	if active != "" {
		s += " (active tab: " + active + ")"
	}
	return s
}
