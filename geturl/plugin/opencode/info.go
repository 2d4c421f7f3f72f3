package opencode

import (
	"context"
	"net/http"
	"sort"
)

func (c *call) info(ctx context.Context) (any, error) {
	switch c.a.Action {
	case "status":
		return c.status(ctx), nil
	case "capabilities":
		var caps map[string]any
		if err := c.client().do(ctx, http.MethodGet, "/experimental/capabilities", nil, &caps); err != nil {
			return nil, err
		}
		return map[string]any{"action": "capabilities", "server": caps,
			"plugin": map[string]any{
				"allowExisting": c.p.cfg.AllowExisting, "allowNested": c.p.cfg.AllowNested, "maxWorkers": c.p.cfg.MaxWorkers,
				"write": c.auth.Write, "terminal": c.auth.Terminal,
				"workerCeiling":            viewCeiling(c.auth, c.p.cfg.AllowNested),
				"existingSessionExecution": c.p.cfg.AllowExisting && c.auth.Write && c.auth.Terminal,
			}}, nil
	case "providers", "models", "limits":
		provs, def, err := c.providers(ctx)
		if err != nil {
			return nil, err
		}
		return c.catalog(provs, def)
	case "agents":
		var agents []ocAgent
		if err := c.client().do(ctx, http.MethodGet, "/agent", nil, &agents); err != nil {
			return nil, err
		}
		out := []ocAgent{}
		for _, a := range agents {
			if !a.Hidden {
				out = append(out, ocAgent{Name: a.Name, Description: a.Description, Mode: a.Mode, Native: a.Native})
			}
		}
		return map[string]any{"action": "agents", "agents": out}, nil
	case "usage":
		ss, _, err := c.listSessions(ctx, c.scope.Root(), false)
		if err != nil {
			return nil, err
		}
		type total struct {
			Sessions int      `json:"sessions"`
			Cost     float64  `json:"cost"`
			Tokens   ocTokens `json:"tokens"`
		}
		by := map[string]*total{"geturl": {}, "external": {}}
		for _, s := range ss {
			k := "external"
			if _, ok := sessionMeta(s); ok {
				k = "geturl"
			}
			t := by[k]
			t.Sessions++
			t.Cost += s.Cost
			t.Tokens.Input += s.Tokens.Input
			t.Tokens.Output += s.Tokens.Output
			t.Tokens.Reasoning += s.Tokens.Reasoning
			t.Tokens.Cache.Read += s.Tokens.Cache.Read
			t.Tokens.Cache.Write += s.Tokens.Cache.Write
		}
		return map[string]any{"action": "usage", "workdir": "/project", "byOwner": by}, nil
	}
	return nil, nil
}

// statusView never fails: an unreachable or locked server is a state.
func (c *call) status(ctx context.Context) map[string]any {
	err := c.client().connect(ctx)
	snap := c.client().snapshot()
	out := map[string]any{
		"action": "status", "state": snap.State, "url": c.client().origin,
		"instance":      map[string]any{"pinning": snap.Identity.Kind},
		"auth":          map[string]any{"required": snap.Auth, "credential": c.credentialKind(), "paired": snap.Paired},
		"allowExisting": c.p.cfg.AllowExisting, "allowNested": c.p.cfg.AllowNested, "maxWorkers": c.p.cfg.MaxWorkers,
	}
	if snap.Version != "" {
		out["version"] = snap.Version
	}
	if c.p.cfg.DeviceID != "" {
		out["deviceID"] = c.p.cfg.DeviceID
	}
	if err != nil {
		out["detail"] = toolError(err).Error()
	}
	return out
}

// credentialKind names (never shows) the configured credential.
func (c *call) credentialKind() string {
	switch {
	case c.p.cfg.DeviceToken != "":
		return "device-token"
	case c.p.cfg.BootstrapPassword != "":
		return "bootstrap-password"
	}
	return "none"
}

func (c *call) providers(ctx context.Context) ([]ocProvider, map[string]string, error) {
	var resp struct {
		Providers []ocProvider      `json:"providers"`
		Default   map[string]string `json:"default"`
	}
	// /config/providers is the configured set; /provider would also list
	// the whole models.dev catalog (megabytes).
	if err := c.client().do(ctx, http.MethodGet, "/config/providers", nil, &resp); err != nil {
		return nil, nil, err
	}
	sort.Slice(resp.Providers, func(i, j int) bool { return resp.Providers[i].ID < resp.Providers[j].ID })
	return resp.Providers, resp.Default, nil
}

type modelView struct {
	ID        string   `json:"id"` // provider/model
	Name      string   `json:"name"`
	Variants  []string `json:"variants,omitempty"`
	Reasoning bool     `json:"reasoning,omitempty"`
	Toolcall  bool     `json:"toolcall,omitempty"`
	Context   float64  `json:"context,omitempty"`
	Output    float64  `json:"output,omitempty"`
	Status    string   `json:"status,omitempty"`
}

func (c *call) catalog(provs []ocProvider, def map[string]string) (any, error) {
	switch c.a.Action {
	case "providers":
		type pv struct {
			ID      string `json:"id"`
			Name    string `json:"name"`
			Models  int    `json:"models"`
			Default string `json:"defaultModel,omitempty"`
		}
		out := []pv{}
		for _, p := range provs {
			out = append(out, pv{ID: p.ID, Name: p.Name, Models: len(p.Models), Default: def[p.ID]})
		}
		return map[string]any{"action": "providers", "providers": out}, nil
	case "models":
		out := []modelView{}
		for _, p := range provs {
			if c.a.Provider != "" && p.ID != c.a.Provider {
				continue
			}
			ids := make([]string, 0, len(p.Models))
			for id := range p.Models {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				m := p.Models[id]
				v := modelView{ID: p.ID + "/" + id, Name: m.Name, Reasoning: m.Capabilities.Reasoning, Toolcall: m.Capabilities.Toolcall,
					Context: m.Limit.Context, Output: m.Limit.Output, Status: m.Status}
				for k := range m.Variants {
					v.Variants = append(v.Variants, k)
				}
				sort.Strings(v.Variants)
				out = append(out, v)
			}
		}
		return map[string]any{"action": "models", "models": out}, nil
	}
	// limits
	limits := []map[string]any{}
	for _, p := range provs {
		for id, m := range p.Models {
			limits = append(limits, map[string]any{"model": p.ID + "/" + id, "context": m.Limit.Context, "output": m.Limit.Output})
		}
	}
	sort.Slice(limits, func(i, j int) bool { return limits[i]["model"].(string) < limits[j]["model"].(string) })
	return map[string]any{"action": "limits", "models": limits,
		"plugin": map[string]any{"maxWorkers": c.p.cfg.MaxWorkers, "maxSwarm": c.p.cfg.MaxWorkers,
			"maxPromptBytes": maxPromptBytes, "maxTimeoutMs": maxTimeoutMs, "maxResultText": maxResultText}}, nil
}
