package pixelle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Canvas command API limits (the contract's "Canvas command API").
const (
	maxIDs          = 100
	maxUpsertNodes  = 30
	maxEdges        = 100
	maxTitle        = 120
	maxTextContent  = 100_000
	maxImageContent = 900_000
	maxCoordinate   = 10_000
	// maxCommandBytes keeps a command inside the relay's 2 MiB message
	// limit with room for the envelope.
	maxCommandBytes = DefaultMaxMessage - 512
)

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

var imageDataURL = regexp.MustCompile(`^data:image/(png|jpeg|webp);base64,[A-Za-z0-9+/]+={0,2}$`)

// methodSpec describes one agent method.
type methodSpec struct {
	mutation bool
	params   func(p map[string]json.RawMessage) error // nil: no params allowed
}

var methods = map[string]methodSpec{
	"state.read":     {},
	"selection.read": {},
	"events.read":    {},
	"project.export": {},
	"nodes.read":     {params: idsParams(1, "nodes.read")},
	"nodes.upsert":   {mutation: true, params: upsertParams},
	"nodes.delete":   {mutation: true, params: idsParams(1, "nodes.delete")},
	"selection.set":  {mutation: true, params: idsParams(0, "selection.set")},
	"viewport.focus": {mutation: true, params: idsParams(1, "viewport.focus")},
}

// knownMethods lists the methods for error messages.
func knownMethods() string {
	names := make([]string, 0, len(methods))
	for n := range methods {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// ValidateCommand checks an agent command against the Canvas command API
// before it is sent, and returns it compacted. Errors say exactly which
// field is wrong. The browser stays authoritative: this only catches what
// can be known without the canvas (edge endpoints, totals and revisions are
// the browser's to judge).
func ValidateCommand(raw []byte) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > maxCommandBytes {
		return nil, fmt.Errorf("command is %d bytes; the relay accepts at most %d", len(raw), maxCommandBytes)
	}
	// json.Unmarshal would quietly read invalid UTF-8 as U+FFFD while the
	// bytes sent stay invalid, and the relay closes such a frame unrouted.
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("command is not valid UTF-8 text")
	}
	top, err := object(raw, "command")
	if err != nil {
		return nil, err
	}
	var method string
	if err := str(top, "method", &method, true); err != nil {
		return nil, err
	}
	if method == "project.import" {
		return nil, fmt.Errorf("method project.import is browser-only, not an agent operation")
	}
	spec, ok := methods[method]
	if !ok {
		return nil, fmt.Errorf("unknown method %q; known: %s", method, knownMethods())
	}
	allowed := []string{"method", "params"}
	if spec.mutation {
		allowed = append(allowed, "expectedRevision", "operationId")
		if err := revision(top); err != nil {
			return nil, err
		}
		var op string
		if err := str(top, "operationId", &op, true); err != nil {
			return nil, err
		}
		if !idPattern.MatchString(op) {
			return nil, fmt.Errorf("operationId %q: use 1-80 ASCII letters, digits, _ or -", op)
		}
	}
	if err := onlyKeys(top, "command", allowed...); err != nil {
		if !spec.mutation && (has(top, "expectedRevision") || has(top, "operationId")) {
			return nil, fmt.Errorf("%s is a read: it takes no expectedRevision or operationId", method)
		}
		return nil, err
	}
	pr, hasParams := top["params"]
	switch {
	case spec.params == nil && hasParams:
		return nil, fmt.Errorf("%s takes no params", method)
	case spec.params != nil && !hasParams:
		return nil, fmt.Errorf("%s needs params", method)
	case spec.params != nil:
		p, err := object(pr, "params")
		if err != nil {
			return nil, err
		}
		if err := spec.params(p); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("command is not valid JSON: %v", err)
	}
	return buf.Bytes(), nil
}

func idsParams(min int, method string) func(map[string]json.RawMessage) error {
	return func(p map[string]json.RawMessage) error {
		if err := onlyKeys(p, "params", "ids"); err != nil {
			return err
		}
		raw, ok := p["ids"]
		if !ok {
			return fmt.Errorf("params.ids is required for %s", method)
		}
		_, err := idList(raw, "params.ids", min, maxIDs)
		return err
	}
}

func idList(raw json.RawMessage, field string, min, max int) ([]string, error) {
	var ids []string
	if err := json.Unmarshal(raw, &ids); err != nil || ids == nil {
		return nil, fmt.Errorf("%s must be an array of ID strings", field)
	}
	if len(ids) < min || len(ids) > max {
		return nil, fmt.Errorf("%s has %d IDs; allowed %d to %d", field, len(ids), min, max)
	}
	for i, id := range ids {
		if !idPattern.MatchString(id) {
			return nil, fmt.Errorf("%s[%d] %q: use 1-80 ASCII letters, digits, _ or -", field, i, id)
		}
	}
	return ids, nil
}

func upsertParams(p map[string]json.RawMessage) error {
	if err := onlyKeys(p, "params", "nodes", "edges"); err != nil {
		return err
	}
	var nodes, edges []json.RawMessage
	if raw, ok := p["nodes"]; ok {
		if err := json.Unmarshal(raw, &nodes); err != nil || nodes == nil {
			return fmt.Errorf("params.nodes must be an array of node objects")
		}
	}
	if raw, ok := p["edges"]; ok {
		if err := json.Unmarshal(raw, &edges); err != nil || edges == nil {
			return fmt.Errorf("params.edges must be an array of edge objects")
		}
	}
	if len(nodes) == 0 && len(edges) == 0 {
		return fmt.Errorf("nodes.upsert needs at least one node or edge")
	}
	if len(nodes) > maxUpsertNodes {
		return fmt.Errorf("params.nodes has %d nodes; at most %d per upsert", len(nodes), maxUpsertNodes)
	}
	if len(edges) > maxEdges {
		return fmt.Errorf("params.edges has %d edges; the canvas holds at most %d", len(edges), maxEdges)
	}
	seen := map[string]bool{}
	for i, raw := range nodes {
		id, err := node(raw, fmt.Sprintf("params.nodes[%d]", i))
		if err != nil {
			return err
		}
		if seen[id] {
			return fmt.Errorf("params.nodes[%d]: id %q appears twice", i, id)
		}
		seen[id] = true
	}
	seenEdge := map[string]bool{}
	for i, raw := range edges {
		field := fmt.Sprintf("params.edges[%d]", i)
		e, err := object(raw, field)
		if err != nil {
			return err
		}
		if err := onlyKeys(e, field, "id", "source", "target"); err != nil {
			return err
		}
		var id string
		for _, k := range []string{"id", "source", "target"} {
			var v string
			if err := str(e, k, &v, true); err != nil {
				return fmt.Errorf("%s.%v", field, err)
			}
			if !idPattern.MatchString(v) {
				return fmt.Errorf("%s.%s %q: use 1-80 ASCII letters, digits, _ or -", field, k, v)
			}
			if k == "id" {
				id = v
			}
		}
		if seenEdge[id] {
			return fmt.Errorf("%s: id %q appears twice", field, id)
		}
		seenEdge[id] = true
	}
	return nil
}

// node checks one upsert node and returns its id. Creation needs kind,
// title and content, but only the browser knows which ids exist, so all
// three stay optional here.
func node(raw json.RawMessage, field string) (string, error) {
	n, err := object(raw, field)
	if err != nil {
		return "", err
	}
	if err := onlyKeys(n, field, "id", "kind", "title", "content", "x", "y"); err != nil {
		return "", err
	}
	var id, kind, title, content string
	if err := str(n, "id", &id, true); err != nil {
		return "", fmt.Errorf("%s.%v", field, err)
	}
	if !idPattern.MatchString(id) {
		return "", fmt.Errorf("%s.id %q: use 1-80 ASCII letters, digits, _ or -", field, id)
	}
	if err := str(n, "kind", &kind, false); err != nil {
		return "", fmt.Errorf("%s.%v", field, err)
	}
	if has(n, "kind") && !slices.Contains([]string{"note", "html", "image"}, kind) {
		return "", fmt.Errorf("%s.kind %q: must be note, html or image", field, kind)
	}
	if err := str(n, "title", &title, false); err != nil {
		return "", fmt.Errorf("%s.%v", field, err)
	}
	if l := utf16Len(title); l > maxTitle {
		return "", fmt.Errorf("%s.title has %d characters; at most %d", field, l, maxTitle)
	}
	if err := str(n, "content", &content, false); err != nil {
		return "", fmt.Errorf("%s.%v", field, err)
	}
	if has(n, "content") {
		// Without a kind (a patch) only the browser knows the node's kind;
		// content that claims to be an image is judged as one.
		image := kind == "image" || (kind == "" && strings.HasPrefix(content, "data:image/"))
		switch {
		case image && !imageDataURL.MatchString(content):
			return "", fmt.Errorf("%s.content: an image must be a PNG, JPEG or WebP base64 data URL (data:image/png;base64,...)", field)
		case image && len(content) > maxImageContent:
			return "", fmt.Errorf("%s.content: image data URL has %d characters; at most %d (keep the original image below 650 KB)", field, len(content), maxImageContent)
		case !image && utf16Len(content) > maxTextContent:
			return "", fmt.Errorf("%s.content has %d characters; notes and HTML allow at most %d", field, utf16Len(content), maxTextContent)
		}
	}
	for _, k := range []string{"x", "y"} {
		raw, ok := n[k]
		if !ok {
			continue
		}
		var v float64
		if err := json.Unmarshal(raw, &v); err != nil || isNull(raw) || math.IsNaN(v) || math.IsInf(v, 0) {
			return "", fmt.Errorf("%s.%s must be a finite number", field, k)
		}
		if math.Abs(v) > maxCoordinate {
			return "", fmt.Errorf("%s.%s = %v: positions must lie within +/-%d", field, k, v, maxCoordinate)
		}
	}
	return id, nil
}

// utf16Len counts characters the way the browser (JavaScript) does.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += len(utf16.Encode([]rune{r}))
	}
	return n
}

// object decodes raw as a JSON object.
func object(raw json.RawMessage, field string) (map[string]json.RawMessage, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("%s must be a JSON object", field)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(t, &m); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %v", field, err)
	}
	return m, nil
}

// isNull reports a JSON null, which json.Unmarshal accepts silently for
// strings and numbers (leaving the zero value) but the canvas does not.
func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

func has(m map[string]json.RawMessage, k string) bool { _, ok := m[k]; return ok }

// str reads m[k] as a string; a missing key is an error only if required.
func str(m map[string]json.RawMessage, k string, dst *string, required bool) error {
	raw, ok := m[k]
	if !ok {
		if required {
			return fmt.Errorf("%s is required", k)
		}
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil || isNull(raw) {
		return fmt.Errorf("%s must be a string", k)
	}
	return nil
}

// revision checks expectedRevision: a non-negative integer.
func revision(m map[string]json.RawMessage) error {
	raw, ok := m["expectedRevision"]
	if !ok {
		return fmt.Errorf("expectedRevision is required for a mutation: read state first and pass its revision")
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil || isNull(raw) || v < 0 || v != math.Trunc(v) || v > 1<<53 {
		return fmt.Errorf("expectedRevision must be a non-negative integer, got %s", raw)
	}
	return nil
}

// onlyKeys rejects keys outside allowed, naming the first unknown one.
func onlyKeys(m map[string]json.RawMessage, field string, allowed ...string) error {
	var extra []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	sort.Strings(extra)
	return fmt.Errorf("%s has unknown field %q; allowed: %s", field, extra[0], strings.Join(allowed, ", "))
}
