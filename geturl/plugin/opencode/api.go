package opencode

import "encoding/json"

// The slices of OpenCode's HTTP API (1.18, the /doc OpenAPI document) the
// plugin reads. Unknown fields are ignored so newer servers still decode.

type ocSession struct {
	ID        string          `json:"id"`
	Title     string          `json:"title"`
	Directory string          `json:"directory"`
	ParentID  string          `json:"parentID,omitempty"`
	Agent     string          `json:"agent,omitempty"`
	Model     *ocModelRef     `json:"model,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
	Cost      float64         `json:"cost"`
	Tokens    ocTokens        `json:"tokens"`
	Time      struct {
		Created  int64 `json:"created"`
		Updated  int64 `json:"updated"`
		Archived int64 `json:"archived,omitempty"`
	} `json:"time"`
	Permission []Rule `json:"permission,omitempty"`
}

type ocModelRef struct {
	ID         string `json:"id"`
	ProviderID string `json:"providerID"`
	Variant    string `json:"variant,omitempty"`
}

type ocTokens struct {
	Input     float64 `json:"input"`
	Output    float64 `json:"output"`
	Reasoning float64 `json:"reasoning"`
	Cache     struct {
		Read  float64 `json:"read"`
		Write float64 `json:"write"`
	} `json:"cache"`
}

// ocMessage is one message with its parts (GET .../message).
type ocMessage struct {
	Info  ocMessageInfo `json:"info"`
	Parts []ocPart      `json:"parts"`
}

type ocMessageInfo struct {
	ID         string `json:"id"`
	SessionID  string `json:"sessionID"`
	Role       string `json:"role"`
	ParentID   string `json:"parentID,omitempty"`
	Agent      string `json:"agent,omitempty"`
	ModelID    string `json:"modelID,omitempty"`
	ProviderID string `json:"providerID,omitempty"`
	Finish     string `json:"finish,omitempty"`
	Time       struct {
		Created   int64 `json:"created"`
		Completed int64 `json:"completed,omitempty"`
	} `json:"time"`
	Error *struct {
		Name string `json:"name"`
		Data struct {
			Message string `json:"message"`
		} `json:"data"`
	} `json:"error,omitempty"`
	Cost   float64  `json:"cost"`
	Tokens ocTokens `json:"tokens"`
}

type ocPart struct {
	Type  string `json:"type"`
	Text  string `json:"text,omitempty"`
	Tool  string `json:"tool,omitempty"`
	State *struct {
		Status string `json:"status"`
	} `json:"state,omitempty"`
	Synthetic bool `json:"synthetic,omitempty"`
}

type ocStatus struct {
	Type    string `json:"type"` // idle, busy, retry
	Attempt int    `json:"attempt,omitempty"`
	Message string `json:"message,omitempty"`
}

type ocPermissionRequest struct {
	ID         string          `json:"id"`
	SessionID  string          `json:"sessionID"`
	Permission string          `json:"permission"`
	Patterns   []string        `json:"patterns"`
	Always     []string        `json:"always"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
	Tool       *struct {
		MessageID string `json:"messageID"`
		CallID    string `json:"callID"`
	} `json:"tool,omitempty"`
}

type ocQuestionRequest struct {
	ID        string `json:"id"`
	SessionID string `json:"sessionID"`
	Questions []struct {
		Question string `json:"question"`
		Header   string `json:"header,omitempty"`
		Multiple bool   `json:"multiple,omitempty"`
		Options  []struct {
			Label       string `json:"label"`
			Description string `json:"description,omitempty"`
		} `json:"options"`
	} `json:"questions"`
}

type ocProvider struct {
	ID     string             `json:"id"`
	Name   string             `json:"name"`
	Source string             `json:"source,omitempty"`
	Models map[string]ocModel `json:"models"`
}

type ocModel struct {
	ID           string                     `json:"id"`
	Name         string                     `json:"name"`
	Family       string                     `json:"family,omitempty"`
	Status       string                     `json:"status,omitempty"`
	Variants     map[string]json.RawMessage `json:"variants,omitempty"`
	Capabilities struct {
		Reasoning  bool `json:"reasoning"`
		Toolcall   bool `json:"toolcall"`
		Attachment bool `json:"attachment"`
	} `json:"capabilities"`
	Limit struct {
		Context float64 `json:"context"`
		Input   float64 `json:"input,omitempty"`
		Output  float64 `json:"output"`
	} `json:"limit"`
	Cost struct {
		Input  float64 `json:"input"`
		Output float64 `json:"output"`
	} `json:"cost"`
}

type ocAgent struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Mode        string `json:"mode,omitempty"`
	Hidden      bool   `json:"hidden,omitempty"`
	Native      bool   `json:"native,omitempty"`
}

// meta is the geturl tag in a session's metadata ("getMcp", the spec's
// name). Kind is "group" for the per-root group session, "worker" for a
// worker.
type meta struct {
	Kind    string `json:"kind"`
	Request string `json:"request,omitempty"` // creation identity
	Swarm   string `json:"swarm,omitempty"`
	Label   string `json:"label,omitempty"`
	// Turns are the user message ids geturl admitted, oldest first: a
	// worker's result is correlated to one of these, never to whatever
	// message happens to be last.
	Turns []string `json:"turns,omitempty"`
}

const metaKey = "getMcp"

// sessionMeta returns the geturl tag of s, if any.
func sessionMeta(s ocSession) (meta, bool) {
	if len(s.Metadata) == 0 {
		return meta{}, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(s.Metadata, &m) != nil || m[metaKey] == nil {
		return meta{}, false
	}
	var out meta
	if json.Unmarshal(m[metaKey], &out) != nil || out.Kind == "" {
		return meta{}, false
	}
	return out, true
}

// withMeta returns s's metadata object with the geturl tag replaced,
// keeping other keys (OpenCode replaces metadata wholesale on update).
func withMeta(s ocSession, m meta) map[string]any {
	out := map[string]any{}
	if len(s.Metadata) > 0 {
		_ = json.Unmarshal(s.Metadata, &out)
		if out == nil {
			out = map[string]any{}
		}
	}
	out[metaKey] = m
	return out
}
