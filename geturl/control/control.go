package control

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/geturl/kernel"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/session"
	"github.com/hubdev/hub/geturl/tunnel"
	"github.com/hubdev/hub/hub"
)

// KeyHeader carries the control key from the control file.
const KeyHeader = "X-Geturl-Key"

// maxControlBody bounds an operator request.
const maxControlBody = 16 << 10

// StateDir is where geturl keeps its state: the project registry, the
// serve lock, the crash-log key and the control file.
func StateDir(d hub.Dirs) string { return filepath.Join(d.State, "geturl") }

// Plane is one run's control plane: the operator API the CLI drives (JSON
// over the keyed control plane; the key gate refuses any request carrying
// an Origin before it looks at the key) and the control page. The adapter
// fills it in for each run of Serve.
type Plane struct {
	Sessions    *session.Manager
	Env         *adapters.Env
	DataPort    int
	ControlPort int
	Key         string // the control file's key, sent by the CLI as KeyHeader
	// ConfiguredOrigin is the configured public origin ("" for none);
	// PublicOrigin is where Init URLs point now: ConfiguredOrigin, else a
	// running managed tunnel's, else "" (the loopback data plane).
	ConfiguredOrigin string
	PublicOrigin     func() string
	Kernel           *kernel.Kernel // the route table, for a session's effective tools
	Tunnel           *tunnel.Manager
	Plugins          func() []route.PluginSummary // /k's catalogue
	Activity         *Activity
	// Companion is the browser companion (nil: none).
	Companion Companion

	ui *uiAuth
}

// Handler is the whole control plane: the keyed operator API under /api/
// (the CLI) and the control page with its API under /ui/api/, which takes
// the page's session secret in SessionHeader. Call it once per Plane.
func (c *Plane) Handler() http.Handler {
	c.ui = newUIAuth(time.Now)
	api := http.NewServeMux()
	api.HandleFunc("GET /api/status", c.status)
	api.HandleFunc("GET /api/projects", c.listProjects)
	api.HandleFunc("POST /api/projects", c.addProject)
	api.HandleFunc("POST /api/projects/{name}", c.setProject)
	api.HandleFunc("DELETE /api/projects/{name}", c.removeProject)
	api.HandleFunc("GET /api/sessions", c.listSessions)
	api.HandleFunc("POST /api/sessions", c.newSession)
	api.HandleFunc("POST /api/sessions/{id}/{op}", c.sessionOp)
	api.HandleFunc("DELETE /api/sessions/{id}", func(w http.ResponseWriter, r *http.Request) {
		r.SetPathValue("op", "delete")
		c.sessionOp(w, r)
	})
	api.HandleFunc("POST /api/login", c.login)
	c.companionRoutes(api, "/api/companion", func(h http.HandlerFunc) http.HandlerFunc { return h })
	gate := hub.KeyGate{Header: KeyHeader, Key: func() string { return c.Key }, Port: func() int { return c.ControlPort }}

	mux := http.NewServeMux()
	mux.Handle("/api/", gate.Wrap(api))
	c.uiRoutes(mux)
	if c.Companion != nil {
		mux.Handle("/companion/", c.Companion.Handler())
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.Env.Activity.AgentActivity()
		mux.ServeHTTP(w, r)
	})
}

func (c *Plane) listProjects(w http.ResponseWriter, r *http.Request) {
	hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "projects": c.Sessions.Projects()})
}

func (c *Plane) removeProject(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := c.Sessions.RemoveProject(name); err != nil {
		refuse(w, err)
		return
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "name": name})
}

func (c *Plane) listSessions(w http.ResponseWriter, r *http.Request) {
	list := c.Sessions.List()
	out := make([]SessionInfo, len(list))
	for i, v := range list {
		out[i] = c.info(v)
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "sessions": out})
}

// login mints a one-time login URL for the control page, so the operator
// never copies a secret by hand (`hub geturl open`). The token is in the
// fragment: the browser sends it to no server; the page's script redeems
// it (uiLogin).
func (c *Plane) login(w http.ResponseWriter, r *http.Request) {
	u := "http://" + hub.LoopbackHost + ":" + strconv.Itoa(c.ControlPort) + "/#login=" + c.ui.newLogin()
	hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "url": u, "expiresIn": int(loginTTL / time.Second)})
}

// refuse answers a session-manager refusal with its code.
func refuse(w http.ResponseWriter, err error) {
	var se *session.Error
	if !errors.As(err, &se) {
		hub.WriteJSON(w, http.StatusInternalServerError, map[string]any{"ok": false, "error": "internal", "message": err.Error()})
		return
	}
	status := http.StatusBadRequest
	switch se.Code {
	case session.CodeProjectNotFound, session.CodeSessionNotFound:
		status = http.StatusNotFound
	case session.CodeProjectExists, session.CodeProjectInUse, session.CodeEnabledLimit, session.CodeDefinitionLimit:
		status = http.StatusConflict
	}
	hub.WriteJSON(w, status, map[string]any{"ok": false, "error": se.Code, "message": se.Message})
}

func badRequest(w http.ResponseWriter, err error) {
	status := http.StatusBadRequest
	if errors.Is(err, hub.ErrBodyTooLarge) {
		status = http.StatusRequestEntityTooLarge
	}
	hub.WriteJSON(w, status, map[string]any{"ok": false, "error": "bad_request", "message": err.Error()})
}

// StatusInfo is GET /api/status.
type StatusInfo struct {
	OK           bool   `json:"ok"`
	PID          int    `json:"pid"`
	Port         int    `json:"port"`
	PublicOrigin string `json:"publicOrigin,omitempty"`
	InitBase     string `json:"initBase"`
	Projects     int    `json:"projects"`
	Enabled      int    `json:"enabledSessions"`
}

func (c *Plane) status(w http.ResponseWriter, r *http.Request) {
	hub.WriteJSON(w, http.StatusOK, StatusInfo{OK: true, PID: os.Getpid(), Port: c.DataPort,
		PublicOrigin: c.ConfiguredOrigin, InitBase: c.base(), Projects: len(c.Sessions.Projects()), Enabled: c.Sessions.EnabledCount()})
}

// base is where Init URLs point: the configured public origin first, then
// a running managed tunnel, else the loopback data plane.
func (c *Plane) base() string {
	if o := c.PublicOrigin(); o != "" {
		return o
	}
	return "http://" + hub.LoopbackHost + ":" + strconv.Itoa(c.DataPort)
}

type projectRequest struct {
	Dir      string  `json:"dir"`
	Name     string  `json:"name"`
	Root     *string `json:"root"`
	Write    *bool   `json:"write"`
	Terminal *bool   `json:"terminal"`
	Bridges  *bool   `json:"bridges"`
}

func (c *Plane) addProject(w http.ResponseWriter, r *http.Request) {
	var req projectRequest
	if err := hub.ReadJSONBody(r, maxControlBody, &req); err != nil {
		badRequest(w, err)
		return
	}
	if req.Dir == "" {
		badRequest(w, errors.New("dir is required"))
		return
	}
	p, err := c.Sessions.AddProject(req.Dir, req.Name, route.Permissions{Write: req.Write != nil && *req.Write,
		Terminal: req.Terminal != nil && *req.Terminal, Bridges: req.Bridges != nil && *req.Bridges})
	if err != nil {
		refuse(w, err)
		return
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "project": p})
}

func (c *Plane) setProject(w http.ResponseWriter, r *http.Request) {
	var req projectRequest
	if err := hub.ReadJSONBody(r, maxControlBody, &req); err != nil {
		badRequest(w, err)
		return
	}
	p, err := c.Sessions.SetProject(r.PathValue("name"), session.ProjectChange{Root: req.Root, Write: req.Write, Terminal: req.Terminal, Bridges: req.Bridges})
	if err != nil {
		refuse(w, err)
		return
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "project": p})
}

// SessionInfo is a session as the control plane reports it: the Init URL
// and the prompt only while the session is live. Write, Terminal and
// Bridges are its project's permissions (Bridges: the hub's bridges as /k
// plugins; it holds only with Write).
type SessionInfo struct {
	ID        string `json:"id"`
	Project   string `json:"project"`
	Label     string `json:"label,omitempty"`
	Enabled   bool   `json:"enabled"`
	Live      bool   `json:"live"`
	Write     bool   `json:"write"`
	Terminal  bool   `json:"terminal"`
	Bridges   bool   `json:"bridges"`
	CreatedAt string `json:"createdAt"`
	InitURL   string `json:"initUrl,omitempty"`
	Prompt    string `json:"prompt,omitempty"`
	Note      string `json:"note,omitempty"`
	// Tools are the routes this session generation may use.
	Tools []string `json:"tools"`
}

func (c *Plane) info(v session.SessionView) SessionInfo {
	si := SessionInfo{ID: v.ID, Project: v.Project, Label: v.Label, Enabled: v.Enabled, Live: v.Live,
		Write: v.Write, Terminal: v.Terminal, Bridges: v.Bridges, CreatedAt: v.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"), Note: v.Note}
	si.Tools = effectiveTools(c.Kernel, v.Write, v.Terminal)
	if v.Live {
		si.InitURL = c.base() + "/v0/init/" + v.InitToken
		si.Prompt = InitPrompt(si.InitURL)
	}
	return si
}

// Prompt is the Init prompt of a live session's Init token, on the origin
// Init URLs point at now: what `session new` prints.
func (c *Plane) Prompt(initToken string) string {
	return InitPrompt(c.base() + "/v0/init/" + initToken)
}

// InitPrompt is the model-neutral message an operator gives the agent: the
// one URL it needs and how to fetch it.
func InitPrompt(initURL string) string {
	return "You can work in my local project through a URL bridge. Fetch this URL first, in raw and unconverted mode " +
		"(no markdown conversion, summary or extraction), and follow the contract it returns; every later URL comes from " +
		"its answers: " + initURL
}

type sessionRequest struct {
	Project string `json:"project"`
	Label   string `json:"label"`
}

func (c *Plane) newSession(w http.ResponseWriter, r *http.Request) {
	var req sessionRequest
	if err := hub.ReadJSONBody(r, maxControlBody, &req); err != nil {
		badRequest(w, err)
		return
	}
	v, err := c.Sessions.NewSession(strings.TrimSpace(req.Project), req.Label)
	if err != nil {
		refuse(w, err)
		return
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "session": c.info(v)})
}

func (c *Plane) sessionOp(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var op func(string) (session.SessionView, error)
	switch r.PathValue("op") {
	case "rotate":
		op = c.Sessions.Rotate
	case "stop":
		op = c.Sessions.Stop
	case "start":
		op = c.Sessions.Start
	case "delete":
		if err := c.Sessions.Delete(id); err != nil {
			refuse(w, err)
			return
		}
		hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "id": id})
		return
	default:
		hub.WriteJSON(w, http.StatusNotFound, map[string]any{"ok": false, "error": "not_found", "message": "sessions support rotate, stop and start"})
		return
	}
	v, err := op(id)
	if err != nil {
		refuse(w, err)
		return
	}
	hub.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "session": c.info(v)})
}

// File is how the operator CLI finds and authenticates to the
// running control plane (0600, under the 0700 state dir).
type File struct {
	PID         int    `json:"pid"`
	Port        int    `json:"port"`
	ControlPort int    `json:"controlPort"`
	Key         string `json:"key"`
}

// maxControlFile bounds the control file read (it is about 100 bytes).
const maxControlFile = 4 << 10

// FilePath is the control file's path.
func FilePath(d hub.Dirs) string { return StateDir(d) + "/control.json" }

// WriteFile writes the control file (0600, under the 0700 state dir).
func WriteFile(d hub.Dirs, cf File) error {
	if err := hub.EnsurePrivateDir(StateDir(d)); err != nil {
		return err
	}
	b, err := json.Marshal(cf)
	if err != nil {
		return err
	}
	return hub.WriteFileAtomic(FilePath(d), append(b, '\n'), 0o600)
}

// RemoveFile deletes the control file only if it is still pid's: a
// second geturl may have replaced it.
func RemoveFile(d hub.Dirs, pid int) {
	if cf, err := ReadFile(d); err == nil && cf.PID == pid {
		os.Remove(FilePath(d))
	}
}

// ReadFile reads the control file, refusing one that is not a private
// regular file or does not name a control plane.
func ReadFile(d hub.Dirs) (File, error) {
	var cf File
	// It holds the key, and the CLI sends that key to the port it names: a
	// symlink or a file others could read or plant is refused.
	b, err := hub.ReadPrivateFile(FilePath(d), maxControlFile)
	if err != nil {
		return cf, err
	}
	if err := json.Unmarshal(b, &cf); err != nil || cf.ControlPort <= 0 || cf.ControlPort > 65535 || cf.Key == "" {
		return cf, errors.New(FilePath(d) + " is corrupt")
	}
	return cf, nil
}

// effectiveTools lists the tools a generation with these permissions may
// call: every read tool; file mutations with write; the terminal with
// terminal; staging and the journal with either.
func effectiveTools(k *kernel.Kernel, write, terminal bool) []string {
	var out []string
	for _, r := range k.Routes() {
		ok := true
		if r.Base == route.MutationBase {
			switch r.Tool {
			case "terminal":
				ok = terminal
			case "write", "edit", "apply_patch":
				ok = write
			default:
				ok = write || terminal
			}
		}
		if ok {
			out = append(out, r.Tool)
		}
	}
	return out
}
