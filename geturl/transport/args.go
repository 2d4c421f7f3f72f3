package transport

import "strconv"

// Args are a request's bound, decoded parameters, looked up by canonical
// name (aliases are already folded). The name "raw" is the raw tail.
type Args struct {
	spec   *Spec
	vals   [][]string // per Spec.Params index; nil when absent
	order  []occurrence
	raw    string
	hasRaw bool
}

// Has reports whether the parameter (or "raw") was given.
func (a *Args) Has(name string) bool {
	if name == "raw" {
		return a.hasRaw
	}
	i := a.spec.index(name)
	return i >= 0 && a.vals[i] != nil
}

// Text returns the parameter's (first) decoded value, or "".
func (a *Args) Text(name string) string {
	if v := a.Texts(name); len(v) > 0 {
		return v[0]
	}
	return ""
}

// Texts returns every value of a repeatable parameter, in request order.
func (a *Args) Texts(name string) []string {
	if name == "raw" {
		if a.hasRaw {
			return []string{a.raw}
		}
		return nil
	}
	if i := a.spec.index(name); i >= 0 {
		return a.vals[i]
	}
	return nil
}

// Int returns an Int parameter's value and whether it was given.
func (a *Args) Int(name string) (int, bool) {
	v := a.Text(name)
	if v == "" {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}

// IntOr returns an Int parameter's value, or def when absent.
func (a *Args) IntOr(name string, def int) int {
	if n, ok := a.Int(name); ok {
		return n
	}
	return def
}

// Bool returns a Bool parameter's value and whether it was given.
func (a *Args) Bool(name string) (value, given bool) {
	switch a.Text(name) {
	case "1", "true":
		return true, true
	case "0", "false":
		return false, true
	}
	return false, false
}

// Raw returns the decoded raw tail and whether there was one.
func (a *Args) Raw() (string, bool) { return a.raw, a.hasRaw }

// Content returns the first present of names (which may include "raw"), for
// routes whose text comes from one of several transports.
func (a *Args) Content(names ...string) (name, value string, ok bool) {
	for _, n := range names {
		if a.Has(n) {
			return n, a.Text(n), true
		}
	}
	return "", "", false
}

// Each calls fn for every bound parameter in request order, by canonical
// name (the raw tail excluded), for routes where position carries meaning:
// /r binds a line range to the path= written before it.
func (a *Args) Each(fn func(name, value string)) {
	for _, o := range a.order {
		fn(a.spec.Params[o.param].Name, o.val)
	}
}
