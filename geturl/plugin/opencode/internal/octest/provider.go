// Package octest runs a real `opencode serve` for integration tests: a
// temp HOME and XDG tree so nothing of the user's is read or written, a
// free loopback port, and an OpenAI-compatible fake model provider served
// by the test on loopback, so prompts reach a scripted "model" and never
// the network.
package octest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// ChatRequest is the part of an OpenAI chat-completions request the fake
// looks at.
type ChatRequest struct {
	Model    string        `json:"model"`
	Stream   bool          `json:"stream"`
	Messages []ChatMessage `json:"messages"`
	Tools    []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// ChatMessage is one message of a ChatRequest. Content is a string or an
// array of parts; Text flattens it.
type ChatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// Text is the message's text content.
func (m ChatMessage) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// HasTool reports whether the request offered the model a tool named name.
func (r ChatRequest) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Function.Name == name {
			return true
		}
	}
	return false
}

// Last is the last message of the request.
func (r ChatRequest) Last() ChatMessage {
	if len(r.Messages) == 0 {
		return ChatMessage{}
	}
	return r.Messages[len(r.Messages)-1]
}

// Reply is what the fake model answers: text, or one tool call.
type Reply struct {
	Text     string
	ToolName string
	ToolArgs any
}

// Provider is the fake model provider.
type Provider struct {
	URL string // base URL, ".../v1"

	mu       sync.Mutex
	requests []ChatRequest
}

// CallBash is the prompt marker that makes the default script answer with
// a bash tool call running the rest of the line.
const CallBash = "CALL_BASH:"

// CallTool is the prompt marker that makes the default script call any
// tool: each line "CALL_TOOL:<name> <JSON arguments>" of the latest user
// text is one call, made in order, one per model request, each after the
// previous one's result. Lines naming a tool the request does not offer
// are skipped, as a model that cannot see the tool would.
const CallTool = "CALL_TOOL:"

// Script is the default model: the calls of the CALL_TOOL:<name> <args>
// lines, or a bash tool call for CALL_BASH:<cmd>, in the latest user
// text; "done: <output>" after the last tool result; and "echo: <text>"
// otherwise. Title-generation requests (no tools offered) get a fixed
// title.
func Script(r ChatRequest) Reply {
	last := r.Last()
	if len(r.Tools) == 0 {
		return Reply{Text: "Fake title"}
	}
	user, results := "", 0
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if m := r.Messages[i]; m.Role == "user" {
			user = m.Text()
			break
		} else if m.Role == "tool" {
			results++
		}
	}
	var calls []Reply
	for _, line := range strings.Split(user, "\n") {
		if i := strings.Index(line, CallTool); i >= 0 {
			name, args, _ := strings.Cut(strings.TrimSpace(line[i+len(CallTool):]), " ")
			if r.HasTool(name) {
				calls = append(calls, Reply{ToolName: name, ToolArgs: json.RawMessage(args)})
			}
		}
	}
	if results < len(calls) {
		return calls[results]
	}
	if last.Role == "tool" {
		out := last.Text()
		if len(out) > 200 {
			out = out[:200]
		}
		return Reply{Text: "done: " + strings.TrimSpace(out)}
	}
	text := last.Text()
	if i := strings.Index(text, CallBash); i >= 0 && r.HasTool("bash") {
		cmd := strings.TrimSpace(strings.SplitN(text[i+len(CallBash):], "\n", 2)[0])
		return Reply{ToolName: "bash", ToolArgs: map[string]any{"command": cmd, "description": "run the requested command"}}
	}
	return Reply{Text: "echo: " + strings.TrimSpace(text)}
}

// NewProvider starts the fake on loopback; it stops when the test ends.
func NewProvider(t testing.TB, script func(ChatRequest) Reply) *Provider {
	if script == nil {
		script = Script
	}
	p := &Provider{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !strings.HasSuffix(req.URL.Path, "/chat/completions") {
			http.NotFound(w, req)
			return
		}
		body, _ := io.ReadAll(req.Body)
		var cr ChatRequest
		if err := json.Unmarshal(body, &cr); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.requests = append(p.requests, cr)
		p.mu.Unlock()
		writeReply(w, cr, script(cr))
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL + "/v1"
	return p
}

// Requests returns the chat requests seen so far.
func (p *Provider) Requests() []ChatRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ChatRequest(nil), p.requests...)
}

var callSeq struct {
	sync.Mutex
	n int
}

func writeReply(w http.ResponseWriter, cr ChatRequest, r Reply) {
	callSeq.Lock()
	callSeq.n++
	id := fmt.Sprintf("call_%d", callSeq.n)
	callSeq.Unlock()
	finish := "stop"
	delta := map[string]any{"role": "assistant", "content": r.Text}
	message := map[string]any{"role": "assistant", "content": r.Text}
	if r.ToolName != "" {
		args, _ := json.Marshal(r.ToolArgs)
		calls := []map[string]any{{"index": 0, "id": id, "type": "function", "function": map[string]any{"name": r.ToolName, "arguments": string(args)}}}
		finish = "tool_calls"
		delta = map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}
		message = map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}
	}
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
	if !cr.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-" + id, "object": "chat.completion", "created": 0, "model": cr.Model,
			"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	base := func(choices []any) map[string]any {
		return map[string]any{"id": "chatcmpl-" + id, "object": "chat.completion.chunk", "created": 0, "model": cr.Model, "choices": choices}
	}
	chunk(base([]any{map[string]any{"index": 0, "delta": delta, "finish_reason": nil}}))
	end := base([]any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}})
	end["usage"] = usage
	chunk(end)
	fmt.Fprint(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
