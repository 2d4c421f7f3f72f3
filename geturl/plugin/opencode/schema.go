package opencode

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/hubdev/hub/geturl/plugin"
)

// fieldSchemas describes every argument field once; each tool's schema
// picks its own.
var fieldSchemas = map[string]map[string]any{
	"provider":  {"type": "string", "description": "provider id to filter models by"},
	"sessionID": {"type": "string", "pattern": "^ses_", "description": "OpenCode session id"},
	"workerID":  {"type": "string", "pattern": "^ses_", "description": "worker id (its OpenCode session id)"},
	"swarmID":   {"type": "string", "pattern": "^swm_", "description": "swarm handle from swarm_start"},
	"requestID": {"type": "string", "pattern": "^(per|que)_", "description": "permission (per_) or question (que_) request id"},
	"messageID": {"type": "string", "pattern": "^msg_", "description": "user message id of a turn; its answer is the assistant message whose parentID is this id"},
	"workdir":   {"type": "string", "description": "working directory inside the project: /project, /project/sub or relative", "default": "/project"},
	"prompt":    {"type": "string", "maxLength": maxPromptBytes},
	"title":     {"type": "string", "maxLength": maxTitleBytes},
	"agent":     {"type": "string", "description": "OpenCode agent name, e.g. build or plan"},
	"model":     {"type": "string", "description": "provider/model"},
	"variant":   {"type": "string", "description": "model variant, e.g. high"},
	"limit":     {"type": "integer", "minimum": 1, "maximum": maxListLimit},
	"timeoutMs": {"type": "integer", "minimum": 0, "maximum": maxTimeoutMs, "description": "how long wait/turn block before answering with the current state"},
	"tasks": {"type": "array", "maxItems": MaxWorkersLimit, "items": map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"prompt"},
		"properties": map[string]any{"prompt": map[string]any{"type": "string"}, "title": map[string]any{"type": "string"}},
	}},
	"reply":   {"type": "string", "enum": []string{"once", "always", "reject"}},
	"message": {"type": "string", "description": "optional note sent with a permission reply"},
	"answers": {"type": "array", "items": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"description": "one array of selected option labels per question, in order"},
}

var toolDescriptions = map[string]string{
	ToolInfo:    "Inspect the live OpenCode service: status, capabilities, providers, models, agents, limits, usage.",
	ToolSession: "Inspect or drive OpenCode sessions whose working directory is inside the project, with exact message correlation.",
	ToolWorker:  "Durable, permission-narrowed OpenCode worker sessions, alone or as a bounded swarm of independent workers.",
	ToolRequest: "List and answer OpenCode permission and question walls for sessions inside the project.",
}

// toolList is built once: the schemas never change at run time.
var toolList = func() []plugin.Tool {
	var out []plugin.Tool
	for _, name := range []string{ToolInfo, ToolSession, ToolWorker, ToolRequest} {
		spec := actions[name]
		props := map[string]any{"action": map[string]any{
			"type": "string", "enum": append(slices.Clone(spec.reads), spec.mutations...),
			"description": "read: " + strings.Join(spec.reads, ", ") + mutationsNote(spec.mutations),
		}}
		for _, f := range allowed[name] {
			props[f] = fieldSchemas[f]
		}
		schema, _ := json.Marshal(map[string]any{
			"type": "object", "additionalProperties": false, "required": []string{"action"}, "properties": props,
		})
		out = append(out, plugin.Tool{Name: name, Description: toolDescriptions[name], InputSchema: schema, Mutation: len(spec.mutations) > 0})
	}
	return out
}()

func mutationsNote(m []string) string {
	if len(m) == 0 {
		return ""
	}
	return "; mutation (mutation base only): " + strings.Join(m, ", ")
}
