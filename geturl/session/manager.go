package session

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hubdev/hub/geturl/engine/sandbox"
	"github.com/hubdev/hub/geturl/route"
)

// Options configure a Manager.
type Options struct {
	// Path is the registry file.
	Path string
	// Seed projects are registered (or updated to match) at Open: the
	// projects of hub.yaml. The CLI may change them while running; the
	// config wins again at the next start.
	Seed []Project
	Log  *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// OnChange runs after every change to projects or sessions.
	OnChange func()
}

// Manager is the registry plus the live generations. It outlives one run of
// the data plane (an adapter restart keeps every live URL valid). A new
// process keeps each live session's tokens (TokensFileName), the mutation
// token with its restored journal, so its URLs survive a restart.
type Manager struct {
	opts   Options
	tokens route.TokenTable

	mu   sync.Mutex
	reg  registry
	live map[string]*Generation // by session id
	// changed is closed at the next change of live (HoldWhileLive).
	changed chan struct{}
}

// ProjectView is a project as the operator sees it.
type ProjectView struct {
	Name     string `json:"name"`
	Root     string `json:"root"`
	Write    bool   `json:"write"`
	Terminal bool   `json:"terminal"`
	Bridges  bool   `json:"bridges"`
	Sessions int    `json:"sessions"`
}

// SessionView is a session as the operator sees it. InitToken is set only
// while the session is live; it never leaves the control plane except
// inside the Init URL the operator asked for.
type SessionView struct {
	ID        string    `json:"id"`
	Project   string    `json:"project"`
	Label     string    `json:"label,omitempty"`
	Enabled   bool      `json:"enabled"`
	Live      bool      `json:"live"`
	Write     bool      `json:"write"`
	Terminal  bool      `json:"terminal"`
	Bridges   bool      `json:"bridges"`
	CreatedAt time.Time `json:"createdAt"`
	Note      string    `json:"note,omitempty"`
	InitToken string    `json:"-"`
}

// Open loads the registry, applies the seed projects and brings every
// enabled session to life: with the Init and read tokens it had before
// the restart when they were kept, else fresh ones.
func Open(o Options) (*Manager, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	reg, err := loadRegistry(o.Path)
	if err != nil {
		return nil, err
	}
	m := &Manager{opts: o, reg: reg, live: map[string]*Generation{}}
	changed := false
	for _, p := range o.Seed {
		if err := checkName(p.Name); err != nil {
			return nil, err
		}
		if p.Bridges && !p.Write {
			return nil, errBridgesNeedWrite(p.Name)
		}
		scope, err := sandbox.New(p.Root)
		if err != nil {
			return nil, fmt.Errorf("project %s: root %s: %v", p.Name, p.Root, err)
		}
		p.Root = scope.Root()
		if i, ok := m.reg.project(p.Name); ok {
			if m.reg.Projects[i] != p {
				m.reg.Projects[i], changed = p, true
			}
		} else {
			m.reg.Projects, changed = append(m.reg.Projects, p), true
		}
	}
	if changed {
		if err := m.reg.save(o.Path); err != nil {
			return nil, err
		}
	}
	kept, err := loadKept(tokensPath(o.Path))
	if err != nil {
		o.Log.Warn("session tokens not reused; every session gets new URLs", "file", tokensPath(o.Path), "err", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, d := range m.reg.Sessions {
		if d.Enabled {
			var k *keptTokens
			if t, ok := kept[d.ID]; ok {
				k = &t
			}
			m.mint(d, k)
		}
	}
	m.saveKeptLocked()
	m.sweepJournalsLocked()
	return m, nil
}

// Sessions is the token table the data plane looks tokens up in.
func (m *Manager) Sessions() *route.TokenTable { return &m.tokens }

// startLocked mints a generation for d with new tokens, and keeps them.
func (m *Manager) startLocked(d Definition) *Generation {
	g := m.mint(d, nil)
	m.saveKeptLocked()
	m.liveChangedLocked()
	return g
}

// mint makes a generation for d, with kept's tokens when not nil. A
// project whose root is gone keeps its sessions enabled but not live, with
// a note, until the root is back.
func (m *Manager) mint(d Definition, kept *keptTokens) *Generation {
	i, ok := m.reg.project(d.Project)
	if !ok {
		return nil
	}
	p := m.reg.Projects[i]
	scope, err := sandbox.New(p.Root)
	if err != nil {
		m.opts.Log.Warn("project root unavailable; its sessions stay down", "project", p.Name, "err", err)
		return nil
	}
	g := newGeneration(d, p, scope, m.opts.Now, kept, journalsDir(m.opts.Path), m.opts.Log)
	m.live[d.ID] = g
	m.tokens.Add(g)
	return g
}

func (m *Manager) stopLocked(id string) {
	if g := m.live[id]; g != nil {
		m.tokens.Remove(g)
		delete(m.live, id)
		g.retire(m.opts.Log)
		go g.end()
		m.saveKeptLocked()
		m.liveChangedLocked()
	}
}

// commitLocked persists the registry and reports the change.
func (m *Manager) commitLocked() error {
	if err := m.reg.save(m.opts.Path); err != nil {
		return fmt.Errorf("saving the registry: %w", err)
	}
	if m.opts.OnChange != nil {
		go m.opts.OnChange()
	}
	return nil
}

// CheckName is the project-name rule, for hub.yaml's projects to be
// refused by `hub config check` rather than at start.
func CheckName(name string) error { return checkName(name) }

func checkName(name string) error {
	if !nameRE().MatchString(name) {
		return errorf(CodeInvalidName, "name %q must be 1-40 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

// defaultName derives a project name from its root's last element.
func (m *Manager) defaultNameLocked(root string) string {
	base := strings.Map(func(r rune) rune {
		if r < 128 && (r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z') {
			return r
		}
		return '-'
	}, filepath.Base(root))
	base = strings.TrimLeft(base, ".-_")
	if len(base) > 34 {
		base = base[:34] // room for a -N suffix within 40
	}
	if base == "" {
		base = "project"
	}
	name := base
	for n := 2; ; n++ {
		if _, taken := m.reg.project(name); !taken {
			return name
		}
		name = fmt.Sprintf("%s-%d", base, n)
	}
}

// AddProject registers dir (resolved to its canonical realpath; it must be
// a directory) under name, or a name derived from it, granting perm. Two
// names may share one root, e.g. a read-only and a read-write view, but
// only when the second is named: without a name, a root already
// registered is refused (CodeProjectExists) naming its project.
// perm.Bridges needs perm.Write (errBridgesNeedWrite).
func (m *Manager) AddProject(dir, name string, perm route.Permissions) (ProjectView, error) {
	scope, err := sandbox.New(dir)
	if err != nil {
		return ProjectView{}, errorf(CodeInvalidProject, "%s is not a usable project root: %v", dir, rootErr(err))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if name == "" {
		// Without a name, a root already registered is a mistake more
		// often than a second view: it made a silent "-2" duplicate with
		// other permissions. A second view is asked for with a name.
		for _, p := range m.reg.Projects {
			if p.Root == scope.Root() {
				return ProjectView{}, errorf(CodeProjectExists, "%s is already registered as project %s (write: %v, terminal: %v, bridges: %v); "+
					"change it with `hub geturl project set %s`, or register a second view of it with --name NAME",
					p.Root, p.Name, p.Write, p.Terminal, p.Bridges && p.Write, p.Name)
			}
		}
		name = m.defaultNameLocked(scope.Root())
	}
	if err := checkName(name); err != nil {
		return ProjectView{}, err
	}
	if perm.Bridges && !perm.Write {
		return ProjectView{}, errBridgesNeedWrite(name)
	}
	if _, taken := m.reg.project(name); taken {
		return ProjectView{}, errorf(CodeProjectExists, "a project named %s exists; choose another --name or change it with `project set`", name)
	}
	if len(m.reg.Projects) >= MaxProjects {
		return ProjectView{}, errorf(CodeInvalidProject, "at most %d projects may be registered", MaxProjects)
	}
	p := Project{Name: name, Root: scope.Root(), Write: perm.Write, Terminal: perm.Terminal, Bridges: perm.Bridges}
	m.reg.Projects = append(m.reg.Projects, p)
	if err := m.commitLocked(); err != nil {
		m.reg.Projects = m.reg.Projects[:len(m.reg.Projects)-1]
		return ProjectView{}, err
	}
	m.opts.Log.Info("project added", "project", name, "write", p.Write, "terminal", p.Terminal, "bridges", p.Bridges)
	return m.projectViewLocked(p), nil
}

// rootErr trims the path from a sandbox error: the caller names dir.
func rootErr(err error) error {
	if errors.Is(err, sandbox.ErrNotDir) {
		return errors.New("not a directory")
	}
	var pe interface{ Unwrap() error }
	if errors.As(err, &pe) {
		if inner := pe.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

// Projects lists the registry's projects in name order.
func (m *Manager) Projects() []ProjectView {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ProjectView, 0, len(m.reg.Projects))
	for _, p := range m.reg.Projects {
		out = append(out, m.projectViewLocked(p))
	}
	slices.SortFunc(out, func(a, b ProjectView) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (m *Manager) projectViewLocked(p Project) ProjectView {
	perm := p.permissions()
	v := ProjectView{Name: p.Name, Root: p.Root, Write: perm.Write, Terminal: perm.Terminal, Bridges: perm.Bridges}
	for _, d := range m.reg.Sessions {
		if d.Project == p.Name {
			v.Sessions++
		}
	}
	return v
}

// RemoveProject forgets a project that no session uses.
func (m *Manager) RemoveProject(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	i, ok := m.reg.project(name)
	if !ok {
		return errorf(CodeProjectNotFound, "no project named %s", name)
	}
	var ids []string
	for _, d := range m.reg.Sessions {
		if d.Project == name {
			ids = append(ids, d.ID)
		}
	}
	if len(ids) > 0 {
		return errorf(CodeProjectInUse, "project %s still has sessions (%s); delete them first", name, strings.Join(ids, ", "))
	}
	old := slices.Clone(m.reg.Projects)
	m.reg.Projects = slices.Delete(m.reg.Projects, i, i+1)
	if err := m.commitLocked(); err != nil {
		m.reg.Projects = old
		return err
	}
	m.opts.Log.Info("project removed", "project", name)
	return nil
}

// ProjectChange is what `project set` changes; nil leaves a field alone.
type ProjectChange struct {
	Root     *string
	Write    *bool
	Terminal *bool
	Bridges  *bool
}

// SetProject changes a project's root or permissions. Every live session
// of that project gets a new generation (new tokens); no other session is
// touched. Revoking write revokes the bridges opt-in with it (it holds
// only with write); asking for bridges on a project left without write is
// refused (errBridgesNeedWrite).
func (m *Manager) SetProject(name string, c ProjectChange) (ProjectView, error) {
	var root string
	if c.Root != nil {
		scope, err := sandbox.New(*c.Root)
		if err != nil {
			return ProjectView{}, errorf(CodeInvalidProject, "%s is not a usable project root: %v", *c.Root, rootErr(err))
		}
		root = scope.Root()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	i, ok := m.reg.project(name)
	if !ok {
		return ProjectView{}, errorf(CodeProjectNotFound, "no project named %s", name)
	}
	old := m.reg.Projects[i]
	p := old
	if c.Root != nil {
		p.Root = root
	}
	if c.Write != nil {
		p.Write = *c.Write
	}
	if c.Terminal != nil {
		p.Terminal = *c.Terminal
	}
	if c.Bridges != nil {
		p.Bridges = *c.Bridges
	}
	if p.Bridges && !p.Write {
		if c.Bridges != nil {
			return ProjectView{}, errBridgesNeedWrite(name)
		}
		p.Bridges = false // write went: the bridges go with it
	}
	if p == old {
		return m.projectViewLocked(p), nil
	}
	m.reg.Projects[i] = p
	if err := m.commitLocked(); err != nil {
		m.reg.Projects[i] = old
		return ProjectView{}, err
	}
	rotated := 0
	for _, d := range m.reg.Sessions {
		if d.Project == name && d.Enabled {
			m.stopLocked(d.ID)
			m.startLocked(d)
			rotated++
		}
	}
	m.opts.Log.Info("project changed; its sessions rotated", "project", name, "write", p.Write, "terminal", p.Terminal, "bridges", p.Bridges, "rotated", rotated)
	return m.projectViewLocked(p), nil
}

func newSessionID() string {
	var b [3]byte
	rand.Read(b[:])
	return "s" + hex.EncodeToString(b[:])
}

// NewSession defines an enabled session for project and brings it to life.
func (m *Manager) NewSession(project, label string) (SessionView, error) {
	if len(label) > 200 {
		return SessionView{}, errorf(CodeInvalidName, "a label is at most 200 bytes")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.reg.project(project); !ok {
		return SessionView{}, errorf(CodeProjectNotFound, "no project named %s; add it with `hub geturl project add DIR`", project)
	}
	if len(m.reg.Sessions) >= MaxDefinitions {
		return SessionView{}, errorf(CodeDefinitionLimit, "at most %d sessions may be defined; delete one first", MaxDefinitions)
	}
	if m.reg.enabledCount() >= MaxEnabled {
		return SessionView{}, errorf(CodeEnabledLimit, "at most %d sessions may be enabled at once; stop one first", MaxEnabled)
	}
	id := newSessionID()
	for _, taken := m.reg.session(id); taken; _, taken = m.reg.session(id) {
		id = newSessionID()
	}
	d := Definition{ID: id, Project: project, Label: label, Enabled: true, CreatedAt: m.opts.Now().UTC()}
	m.reg.Sessions = append(m.reg.Sessions, d)
	if err := m.commitLocked(); err != nil {
		m.reg.Sessions = m.reg.Sessions[:len(m.reg.Sessions)-1]
		return SessionView{}, err
	}
	m.startLocked(d)
	m.opts.Log.Info("session created", "session", id, "project", project)
	return m.viewLocked(d), nil
}

// Sessions lists every session definition in creation order.
func (m *Manager) List() []SessionView {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]SessionView, 0, len(m.reg.Sessions))
	for _, d := range m.reg.Sessions {
		out = append(out, m.viewLocked(d))
	}
	return out
}

// Session returns one session.
func (m *Manager) Session(id string) (SessionView, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i, ok := m.reg.session(id)
	if !ok {
		return SessionView{}, errorf(CodeSessionNotFound, "no session %s", id)
	}
	return m.viewLocked(m.reg.Sessions[i]), nil
}

func (m *Manager) viewLocked(d Definition) SessionView {
	v := SessionView{ID: d.ID, Project: d.Project, Label: d.Label, Enabled: d.Enabled, CreatedAt: d.CreatedAt}
	if i, ok := m.reg.project(d.Project); ok {
		perm := m.reg.Projects[i].permissions()
		v.Write, v.Terminal, v.Bridges = perm.Write, perm.Terminal, perm.Bridges
	}
	if g := m.live[d.ID]; g != nil {
		v.Live, v.InitToken = true, g.Token(route.CapInit)
	} else if d.Enabled {
		v.Note = "the project root is unavailable; the session comes back when it is"
	}
	return v
}

// Rotate gives a live session a new generation: its old URLs stop working
// at once; other sessions are untouched.
func (m *Manager) Rotate(id string) (SessionView, error) {
	return m.update(id, func(d *Definition) error {
		if !d.Enabled {
			return errorf(CodeSessionNotFound, "session %s is stopped; start it instead", id)
		}
		m.stopLocked(id)
		m.startLocked(*d)
		return nil
	}, false)
}

// Stop disables a session: its generation (and every URL of it) ends.
func (m *Manager) Stop(id string) (SessionView, error) {
	return m.update(id, func(d *Definition) error {
		d.Enabled = false
		m.stopLocked(id)
		return nil
	}, true)
}

// Start enables a stopped session with a fresh generation.
func (m *Manager) Start(id string) (SessionView, error) {
	return m.update(id, func(d *Definition) error {
		if d.Enabled {
			return nil
		}
		if m.reg.enabledCount() >= MaxEnabled {
			return errorf(CodeEnabledLimit, "at most %d sessions may be enabled at once; stop one first", MaxEnabled)
		}
		d.Enabled = true
		m.startLocked(*d)
		return nil
	}, true)
}

// update applies f to session id under the lock and persists when persist
// is set (rotation changes nothing on disk).
func (m *Manager) update(id string, f func(*Definition) error, persist bool) (SessionView, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i, ok := m.reg.session(id)
	if !ok {
		return SessionView{}, errorf(CodeSessionNotFound, "no session %s", id)
	}
	old := m.reg.Sessions[i]
	d := old
	if err := f(&d); err != nil {
		return SessionView{}, err
	}
	m.reg.Sessions[i] = d
	if persist && d != old {
		if err := m.commitLocked(); err != nil {
			m.reg.Sessions[i] = old
			return SessionView{}, err
		}
	} else if m.opts.OnChange != nil {
		go m.opts.OnChange()
	}
	return m.viewLocked(d), nil
}

// Delete ends and forgets a session.
func (m *Manager) Delete(id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	i, ok := m.reg.session(id)
	if !ok {
		return errorf(CodeSessionNotFound, "no session %s", id)
	}
	old := slices.Clone(m.reg.Sessions)
	m.reg.Sessions = slices.Delete(m.reg.Sessions, i, i+1)
	if err := m.commitLocked(); err != nil {
		m.reg.Sessions = old
		return err
	}
	m.stopLocked(id)
	m.opts.Log.Info("session deleted", "session", id)
	return nil
}

// Live returns the live generation of a session, for tests and the
// control page.
func (m *Manager) Live(id string) (*Generation, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.live[id]
	return g, ok
}

// EnabledCount is the number of enabled sessions.
func (m *Manager) EnabledCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reg.enabledCount()
}
