package hubmcp

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub/mcpserver"
)

// statusReport is hub_status's answer.
type statusReport struct {
	Hub     hubReport      `json:"hub"`
	Bridges []bridgeReport `json:"bridges"`
}

type hubReport struct {
	Running bool      `json:"running"`
	PID     int       `json:"pid,omitempty"`
	Started time.Time `json:"started,omitzero"`
	Config  string    `json:"config,omitempty"`
	// StartedByThisServer: `hub mcp` started it because none ran. It is
	// left running when this server exits either way; its idle rules end
	// it once no agent is attached.
	StartedByThisServer bool   `json:"startedByThisServer"`
	Message             string `json:"message"`
}

type bridgeReport struct {
	Name         string         `json:"name"`
	State        adapters.State `json:"state,omitempty"`
	Ports        []int          `json:"ports,omitempty"`
	PageAttached bool           `json:"pageAttached"`
	Agents       int            `json:"agents"`
	Note         string         `json:"note,omitempty"`
	// Error and Fix are a failed bridge's cause and what to do about it
	// (the config key to change); RetryAt when the hub tries it again.
	Error   string    `json:"error,omitempty"`
	Fix     string    `json:"fix,omitempty"`
	RetryAt time.Time `json:"retryAt,omitzero"`
	// Tools are the tools it contributes now; Why says why none.
	Tools []string `json:"tools"`
	Why   string   `json:"why,omitempty"`
	// PageTools are its attached pages' tools among Tools, with the
	// generic call that reaches each: a client whose tool list is stale
	// finds them here.
	PageTools *pageToolsReport `json:"pageTools,omitempty"`
}

// pageToolsReport lists a bridge's page tools (adapters.FacePages).
type pageToolsReport struct {
	// Call is the generic tool; each tool's Call are its arguments, to
	// which the page tool's own are added (as "args" for page_tools_call).
	Call  string              `json:"call"`
	Tools []adapters.PageTool `json:"tools"`
}

type noInput struct{}

// statusTool is hub_status: the hub's own status, and for each bridge the
// tools it contributes or why it contributes none.
func (f *face) statusTool(ctx context.Context, _ *mcp.CallToolRequest, _ noInput) (*mcp.CallToolResult, any, error) {
	f.mu.Lock()
	st, hubWhy, started, startErr := f.hubSt, f.hubWhy, f.started, f.startErr
	why := make(map[string]string, len(f.bridges))
	for _, b := range f.bridges {
		why[b.name] = b.why
	}
	f.mu.Unlock()

	var rep statusReport
	var list []adapters.Status
	if st != nil {
		if status, err := fetchStatus(ctx, st); err != nil {
			hubWhy = "the hub (pid " + itoa(st.PID) + ") does not answer: " + err.Error()
		} else {
			list = status.Adapters
			rep.Hub = hubReport{Running: true, PID: st.PID, Started: status.Started, Config: status.Config,
				StartedByThisServer: started == st.PID, Message: "the hub is running; this server holds it alive while attached"}
		}
	}
	if !rep.Hub.Running {
		rep.Hub.Message = hubWhy
		// The reason already says that starting one failed: say why
		// there, not "starting one failed" a second time.
		if startErr != "" {
			if before, after, ok := strings.Cut(hubWhy, startFailedWhy); ok {
				rep.Hub.Message = before + startFailedWhy + " (" + startErr + ")" + after
			} else {
				rep.Hub.Message += "; " + startFailedWhy + ": " + startErr
			}
		}
	}
	tools := make(map[string][]string, len(f.bridges))
	pages := map[string]*pageToolsReport{}
	for _, b := range f.bridges {
		tools[b.name] = orEmpty(b.face.Tools())
		if fp, ok := b.face.(adapters.FacePages); ok {
			if call, list := fp.PageTools(); len(list) > 0 {
				pages[b.name] = &pageToolsReport{Call: call, Tools: list}
			}
		}
	}
	seen := map[string]bool{}
	for _, a := range list {
		seen[a.Name] = true
		b := bridgeReport{Name: a.Name, State: a.State, Ports: a.Ports, PageAttached: a.PageAttached, Agents: a.AgentSessions,
			Note: a.Note, Tools: orEmpty(tools[a.Name]), Why: why[a.Name], PageTools: pages[a.Name], Fix: a.Fix, RetryAt: a.RetryAt}
		if a.State == adapters.StateFailed || a.State == adapters.StateRestarting {
			b.Error = a.LastError
		}
		if len(b.Tools) == 0 && b.Why == "" {
			b.Why = notRunning(a.Name, a, true)
		}
		if _, served := tools[a.Name]; !served && b.Why == "" {
			b.Why = "hub mcp does not serve this bridge's tools"
		}
		rep.Bridges = append(rep.Bridges, b)
	}
	for _, name := range slices.Sorted(maps.Keys(tools)) {
		if !seen[name] {
			rep.Bridges = append(rep.Bridges, bridgeReport{Name: name, Tools: tools[name], Why: why[name], PageTools: pages[name]})
		}
	}
	b, _ := json.MarshalIndent(rep, "", "  ")
	return mcpserver.TextResult(string(b)), nil, nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
