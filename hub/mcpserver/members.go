package mcpserver

// Members calls fn with each key and raw value of the JSON object raw, in
// order, until fn returns false, and reports whether it read the object
// whole. It decodes nothing, so it is cheap, and it expects valid JSON
// (json.Valid, or a decoder that has parsed it already). A key written
// with escapes, and nesting deeper than the SDK accepts, make it fail:
// the caller then leaves the object to encoding/json.
func Members(raw []byte, fn func(key, val []byte) bool) bool { return members(raw, 1, fn) }

// maxDepth is the nesting the SDK's decoder accepts.
const maxDepth = 1000

// members calls fn with each key (unescaped: a key with escapes fails) and
// value of the JSON object raw, nested depth deep, until fn returns false.
// raw has been validated already (the line decoder has parsed it): this
// finds its members without decoding them, refusing what it does not
// expect, and, like the SDK, an object nested deeper than maxDepth.
func members(raw []byte, depth int, fn func(key, val []byte) bool) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' || depth > maxDepth {
		return false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return skipSpace(raw, i+1) == len(raw)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return false
		}
		end := i + 1
		for end < len(raw) && raw[end] != '"' && raw[end] != '\\' {
			end++
		}
		if end >= len(raw) || raw[end] != '"' {
			return false
		}
		key := raw[i+1 : end]
		i = skipSpace(raw, end+1)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = skipSpace(raw, i+1)
		vend, ok := skipValue(raw, i, depth)
		if !ok || !fn(key, raw[i:vend]) {
			return false
		}
		i = skipSpace(raw, vend)
		switch {
		case i >= len(raw):
			return false
		case raw[i] == '}':
			return skipSpace(raw, i+1) == len(raw)
		case raw[i] != ',':
			return false
		}
		i = skipSpace(raw, i+1)
	}
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the value at raw[i], in an object nested
// depth deep.
func skipValue(raw []byte, i, depth int) (int, bool) {
	if i >= len(raw) {
		return 0, false
	}
	switch raw[i] {
	case '"':
		return skipString(raw, i)
	case '{', '[':
		d := depth
		for j := i; j < len(raw); {
			switch raw[j] {
			case '"':
				end, ok := skipString(raw, j)
				if !ok {
					return 0, false
				}
				j = end
				continue
			case '{', '[':
				if d++; d > maxDepth {
					return 0, false
				}
			case '}', ']':
				if d--; d == depth {
					return j + 1, true
				}
			}
			j++
		}
		return 0, false
	}
	j := i
	for j < len(raw) && raw[j] != ',' && raw[j] != '}' && raw[j] != ']' && raw[j] != ' ' && raw[j] != '\t' && raw[j] != '\n' && raw[j] != '\r' {
		j++
	}
	return j, j > i
}

// skipString returns the end of the string at raw[i].
func skipString(raw []byte, i int) (int, bool) {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}
