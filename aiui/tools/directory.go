package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/hub"
)

// Defaults from the spec.
const (
	DefaultCallTimeout = 15 * time.Second
	DefaultDebounce    = 500 * time.Millisecond
)

// Limits on what a page may declare.
const (
	MaxNamespaces  = 64
	MaxToolsPerNS  = 256
	MaxNameBytes   = 128
	MaxDescBytes   = 8 << 10
	MaxSchemaBytes = 64 << 10
	MaxPending     = 256
	// MaxWindows bounds the window → active-tab map; the least recently
	// activated window is forgotten first (closed windows never send a
	// deactivation, so their slots would otherwise stay forever).
	MaxWindows = 1024
	// DefaultMaxClientBytes bounds the register messages one connection's
	// namespaces hold together (64 namespaces × one whole message each
	// would otherwise be hundreds of MiB per socket).
	DefaultMaxClientBytes = 8 << 20
	// DefaultMaxTotalBytes bounds every connection's registrations
	// together: the contract has no credential, so any local process may
	// open /tools sockets up to the listener's cap (256 × 8 MiB).
	DefaultMaxTotalBytes = 64 << 20
	// maxLogged bounds the per-namespace memory of logged hashes.
	maxLogged = 4096
)

// Tool is one page-declared tool.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// Annotations are MCP tool annotations, when the page gives them
	// (not in the spec): readOnlyHint tells the hub's other agent faces
	// whether a call only reads.
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// Registration is one namespace's full tool set on one connection.
type Registration struct {
	ClientID     string            `json:"clientId"`
	NS           string            `json:"ns"`
	URL          string            `json:"url,omitempty"`
	Tab          *frame.TabInfo    `json:"tab,omitempty"`
	Source       *frame.SourceInfo `json:"source,omitempty"`
	Hash         string            `json:"hash"`
	Tools        []Tool            `json:"tools"`
	RegisteredAt time.Time         `json:"registeredAt"`
	ActiveTab    bool              `json:"activeTab,omitempty"`
	seq          uint64
}

// Summary is the cheap /health view.
type Summary struct {
	Clients    int `json:"clients"`
	Namespaces int `json:"namespaces"`
	Tools      int `json:"tools"`
}

// Change is the debounced change signal.
type Change struct {
	Text          string         `json:"text"`
	Registrations []Registration `json:"registrations"`
}

// Client is one /tools connection.
type Client struct {
	ID      string
	send    func(v any) error
	regs    map[string]*Registration
	sizes   map[string]int // ns → bytes of its register message
	pending map[string]chan result
	gone    bool
	// reporter: this connection has reported an activation (a browser
	// extension watching tabs).
	reporter bool
}

type result struct {
	value json.RawMessage
	err   error
}

// Directory is the in-memory registry of page tools.
type Directory struct {
	// CallTimeout bounds a routed call (default 15 s).
	CallTimeout time.Duration
	// Debounce is the change-signal window (default 500 ms).
	Debounce time.Duration
	// OnChange receives the debounced signal when the signature changed.
	OnChange func(Change)
	// MaxClientBytes bounds one connection's registrations in bytes
	// (0: DefaultMaxClientBytes).
	MaxClientBytes int
	// MaxTotalBytes bounds all connections' registrations together
	// (0: DefaultMaxTotalBytes).
	MaxTotalBytes int
	Log           *slog.Logger
	// Guard runs the debounce timer and call goroutines (nil: plainly).
	Guard *hub.Guard

	mu      sync.Mutex
	clients map[string]*Client
	active  map[int64]activeSlot // windowId → its active tab
	// reporters counts connected activation reporters; the active map is
	// only as current as they are.
	reporters int
	bytes     int // every connection's registrations (sizes)
	logged    map[string]string
	nextID    uint64
	seq       uint64
	timer     *time.Timer
	lastSig   string
	closed    bool
}

// activeSlot is a window's active tab and when it was activated (a
// directory sequence number, for eviction).
type activeSlot struct {
	tab int64
	at  uint64
}

// NewDirectory returns an empty directory with the spec's defaults.
func NewDirectory(log *slog.Logger) *Directory {
	if log == nil {
		log = slog.Default()
	}
	return &Directory{CallTimeout: DefaultCallTimeout, Debounce: DefaultDebounce, Log: log,
		clients: map[string]*Client{}, active: map[int64]activeSlot{}, logged: map[string]string{}}
}

// Connect adds a connection; send writes one JSON text frame to it.
func (d *Directory) Connect(send func(v any) error) *Client {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextID++
	c := &Client{ID: fmt.Sprintf("c%d", d.nextID), send: send, regs: map[string]*Registration{}, sizes: map[string]int{}, pending: map[string]chan result{}}
	d.clients[c.ID] = c
	return c
}

// Disconnect drops the connection's registrations and rejects its
// in-flight calls (pages get no chance to run code when they die).
func (d *Directory) Disconnect(c *Client) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c.gone {
		return
	}
	c.gone = true
	delete(d.clients, c.ID)
	for _, n := range c.sizes {
		d.bytes -= n
	}
	clear(c.sizes)
	for id, ch := range c.pending {
		ch <- result{err: &ToolError{Msg: fmt.Sprintf("page disconnected before answering (client %s)", c.ID), Code: OutcomeUnknown}}
		delete(c.pending, id)
	}
	if len(c.regs) > 0 {
		c.regs = nil
		d.touch()
	}
	if c.reporter {
		d.reporters--
		// With no reporter left nobody keeps the map current: the spec's
		// active-tab rules apply only while one is connected.
		if d.reporters == 0 && len(d.active) > 0 {
			clear(d.active)
			d.touch()
		}
	}
}

// Close stops the debounce timer; later changes are not signalled.
func (d *Directory) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.timer != nil {
		d.timer.Stop()
	}
}

type inMsg struct {
	V      int               `json:"v"`
	Type   string            `json:"type"`
	NS     string            `json:"ns"`
	URL    string            `json:"url"`
	Tab    *frame.TabInfo    `json:"tab"`
	Source *frame.SourceInfo `json:"source"`
	Hash   string            `json:"hash"`
	Tools  []Tool            `json:"tools"`
	CallID string            `json:"callId"`
	OK     bool              `json:"ok"`
	Value  json.RawMessage   `json:"value"`
	Error  string            `json:"error"`
	Active *bool             `json:"active"`
}

// Handle processes one text frame from c and returns its type. Malformed
// messages are answered with { type: "error" } (and returned as the
// error) and the socket stays open.
func (d *Directory) Handle(c *Client, data []byte) (kind string, err error) {
	var m inMsg
	if err := json.Unmarshal(data, &m); err != nil {
		c.send(errMsg("message is not a JSON object: " + err.Error()))
		return "", err
	}
	switch m.Type {
	case "register":
		err = d.register(c, &m, len(data))
	case "result":
		err = d.result(c, &m)
	case "activation":
		err = d.activation(c, &m)
	default:
		err = fmt.Errorf("unknown message type %q (register, result, activation)", m.Type)
	}
	if err != nil {
		c.send(errMsg(err.Error()))
	}
	return m.Type, err
}

func errMsg(s string) map[string]any { return map[string]any{"v": 1, "type": "error", "error": s} }

func validate(m *inMsg) error {
	if m.NS == "" || len(m.NS) > MaxNameBytes {
		return fmt.Errorf("register needs an ns of 1..%d bytes", MaxNameBytes)
	}
	if len(m.Tools) > MaxToolsPerNS {
		return fmt.Errorf("register declares %d tools (max %d)", len(m.Tools), MaxToolsPerNS)
	}
	seen := map[string]bool{}
	for i, t := range m.Tools {
		switch {
		case t.Name == "" || len(t.Name) > MaxNameBytes:
			return fmt.Errorf("tools[%d] needs a name of 1..%d bytes", i, MaxNameBytes)
		case seen[t.Name]:
			return fmt.Errorf("tool %q declared twice in ns %q", t.Name, m.NS)
		case len(t.Description) > MaxDescBytes:
			return fmt.Errorf("tool %q description longer than %d bytes", t.Name, MaxDescBytes)
		case len(t.InputSchema) > MaxSchemaBytes:
			return fmt.Errorf("tool %q inputSchema longer than %d bytes", t.Name, MaxSchemaBytes)
		}
		if len(t.Annotations) > MaxSchemaBytes {
			return fmt.Errorf("tool %q annotations longer than %d bytes", t.Name, MaxSchemaBytes)
		}
		if len(t.Annotations) > 0 && string(t.Annotations) != "null" {
			var obj map[string]any
			if json.Unmarshal(t.Annotations, &obj) != nil {
				return fmt.Errorf("tool %q annotations must be a JSON object", t.Name)
			}
		}
		if len(t.InputSchema) > 0 && string(t.InputSchema) != "null" {
			var obj map[string]any
			if json.Unmarshal(t.InputSchema, &obj) != nil {
				return fmt.Errorf("tool %q inputSchema must be a JSON object", t.Name)
			}
		}
		seen[t.Name] = true
	}
	return nil
}

// contentHash is used when a page sends no hash of its own.
func contentHash(tools []Tool) string {
	b, _ := json.Marshal(tools)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:4])
}

func (d *Directory) register(c *Client, m *inMsg, size int) error {
	if err := validate(m); err != nil {
		return err
	}
	hash := m.Hash
	if hash == "" {
		hash = contentHash(m.Tools)
	}
	d.mu.Lock()
	if c.gone {
		d.mu.Unlock()
		return nil
	}
	if _, ok := c.regs[m.NS]; !ok && len(c.regs) >= MaxNamespaces {
		d.mu.Unlock()
		return fmt.Errorf("too many namespaces on this connection (max %d)", MaxNamespaces)
	}
	limit := d.MaxClientBytes
	if limit <= 0 {
		limit = DefaultMaxClientBytes
	}
	total := size
	for ns, n := range c.sizes {
		if ns != m.NS {
			total += n
		}
	}
	if total > limit {
		d.mu.Unlock()
		return fmt.Errorf("this connection's registrations would exceed %d bytes", limit)
	}
	all := d.MaxTotalBytes
	if all <= 0 {
		all = DefaultMaxTotalBytes
	}
	if d.bytes-c.sizes[m.NS]+size > all {
		d.mu.Unlock()
		return fmt.Errorf("the server's page tool registrations would exceed %d bytes", all)
	}
	d.bytes += size - c.sizes[m.NS]
	c.sizes[m.NS] = size
	d.seq++
	prev := c.regs[m.NS]
	r := &Registration{ClientID: c.ID, NS: m.NS, URL: m.URL, Tab: m.Tab, Source: m.Source, Hash: hash,
		Tools: m.Tools, RegisteredAt: time.Now().UTC(), seq: d.seq}
	if prev != nil {
		r.seq = prev.seq // a re-registration keeps its place in the natural order
	}
	if r.Tools == nil {
		r.Tools = []Tool{}
	}
	c.regs[m.NS] = r
	logIt := d.logged[m.NS] != hash
	d.remember(m.NS, hash)
	// Only what the signature sees re-arms the debounce: same-hash HMR
	// re-registrations, arriving faster than the window, would otherwise
	// hold back every other page's change for as long as they go on.
	if prev == nil || prev.Hash != hash || d.isActive(prev) != d.isActive(r) {
		d.touch()
	}
	d.mu.Unlock()
	if logIt {
		names := make([]string, len(m.Tools))
		for i, t := range m.Tools {
			names[i] = t.Name
		}
		d.Log.Info("page tools registered", "ns", m.NS, "hash", hash, "client", c.ID, "tools", strings.Join(names, ","))
	}
	return c.send(map[string]any{"v": 1, "type": "registered", "ns": m.NS, "hash": hash})
}

func (d *Directory) result(c *Client, m *inMsg) error {
	d.mu.Lock()
	ch, ok := c.pending[m.CallID]
	delete(c.pending, m.CallID)
	d.mu.Unlock()
	if !ok {
		return fmt.Errorf("no call %q is pending on this connection", m.CallID)
	}
	if m.OK {
		v := m.Value
		if len(v) == 0 {
			v = json.RawMessage("null")
		}
		ch <- result{value: v}
	} else {
		msg := m.Error
		if msg == "" {
			msg = "page tool failed without a message"
		}
		ch <- result{err: &ToolError{Msg: msg}}
	}
	return nil
}

func (d *Directory) activation(c *Client, m *inMsg) error {
	if m.Tab == nil || m.Tab.WindowID == nil || m.Tab.ChromeTabID == nil || m.Active == nil {
		return fmt.Errorf("activation needs tab.chromeTabId, tab.windowId and active")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if c.gone {
		return nil
	}
	if !c.reporter {
		c.reporter = true
		d.reporters++
	}
	w, tab := *m.Tab.WindowID, *m.Tab.ChromeTabID
	before, had := d.active[w]
	if *m.Active {
		if _, ok := d.active[w]; !ok && len(d.active) >= MaxWindows {
			d.evictOldestWindow()
		}
		d.seq++
		d.active[w] = activeSlot{tab: tab, at: d.seq}
	} else if cur, ok := d.active[w]; ok && cur.tab == tab {
		// only a deactivation of the current tab clears the slot, so a
		// stale deactivation cannot clobber a newer activation
		delete(d.active, w)
	}
	// a repeated report (the reporter re-sends the current tab when it
	// reconnects) changes nothing and must not re-arm the debounce
	if after, has := d.active[w]; has != had || after.tab != before.tab {
		d.touch()
	}
	return nil
}

// evictOldestWindow forgets the least recently activated window. Caller
// holds mu.
func (d *Directory) evictOldestWindow() {
	var oldest int64
	first := true
	for w, s := range d.active {
		if first || s.at < d.active[oldest].at {
			oldest, first = w, false
		}
	}
	delete(d.active, oldest)
}

// remember notes the hash logged for ns, keeping the memory bounded: when
// full, namespaces no connection holds any more are forgotten first.
// Caller holds mu.
func (d *Directory) remember(ns, hash string) {
	if _, ok := d.logged[ns]; !ok && len(d.logged) >= maxLogged {
		live := map[string]bool{}
		for _, c := range d.clients {
			for n := range c.regs {
				live[n] = true
			}
		}
		for n := range d.logged {
			if !live[n] {
				delete(d.logged, n)
			}
		}
		for n := range d.logged {
			if len(d.logged) < maxLogged {
				break
			}
			delete(d.logged, n)
		}
	}
	d.logged[ns] = hash
}

// isActive reports whether r's tab is its window's active tab. Caller holds mu.
func (d *Directory) isActive(r *Registration) bool {
	if r.Tab == nil || r.Tab.WindowID == nil || r.Tab.ChromeTabID == nil {
		return false
	}
	s, ok := d.active[*r.Tab.WindowID]
	return ok && s.tab == *r.Tab.ChromeTabID
}

// list returns copies, the entries of windows' active tabs first (the
// MCP-B rule the spec borrows), each group in natural (registration)
// order. With no activation reporter no entry is active, so the order is
// the natural one. Caller holds mu.
func (d *Directory) list() []Registration {
	var out []Registration
	for _, c := range d.clients {
		for _, r := range c.regs {
			cp := *r
			cp.Tools = slices.Clone(r.Tools)
			cp.ActiveTab = d.isActive(r)
			out = append(out, cp)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ActiveTab != out[j].ActiveTab {
			return out[i].ActiveTab
		}
		return out[i].seq < out[j].seq
	})
	return out
}

// List is the directory as page_tools_list shows it.
func (d *Directory) List() []Registration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.list()
}

// Summary counts connections, namespaces and tools.
func (d *Directory) Summary() Summary {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := Summary{Clients: len(d.clients)}
	for _, c := range d.clients {
		s.Namespaces += len(c.regs)
		for _, r := range c.regs {
			s.Tools += len(r.Tools)
		}
	}
	return s
}
