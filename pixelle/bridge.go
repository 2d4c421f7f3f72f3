package pixelle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
)

// The relay as adapters.ToolBridge: an agent inside the hub (geturl's
// plugin=pixelle) drives the canvas without a socket or a stored
// credential. Its commands take the same route as an agent socket's: the
// same §6 checks, the same pending limit, timeout and relay-made errors,
// and the browser's answer unchanged.
//
// Which session: the one it paired with itself. The tool "pair" takes the
// code Pixelle shows, exactly like POST /api/pair (same rate limit; it
// replaces the session's earlier agents), and keeps the token inside the
// relay. Like any agent's, the pairing holds until the session is revoked
// or paired again (by anyone), and reaches only that session: a canvas an
// outside agent paired with is never driven through it (§Verification 3,
// sessions cannot see each other's data).
//
// Tools are the §6 methods by name — arguments are the command without
// "method" — plus "pair". Reads are reads; nodes.upsert, nodes.delete,
// selection.set, viewport.focus and pair are mutations. A mutation
// without an operationId gets a derived one (deriveOperationID), so a
// retried URL re-sends the same intent and the browser answers it as a
// replay (§6.4) instead of applying it twice.

var _ adapters.ToolBridge = (*Server)(nil)

// toolPair is the pairing tool's name.
const toolPair = "pair"

// Error codes the bridge itself answers (the relay's and the browser's
// are passed through).
const (
	codeNotPaired     = "NOT_PAIRED"
	codeUnknownMethod = "UNKNOWN_METHOD"
	codeNotAllowed    = "NOT_ALLOWED"
	codeInvalid       = "INVALID_REQUEST"
)

func offline(msg string) error {
	return adapters.NoPage(msg, "ask the person to open Pixelle and click Connect locally; then retry the same URL")
}

var errNoPairing = &adapters.ToolError{Code: codeNotPaired, Retryable: true,
	Message: "a Pixelle canvas is connected but this agent is not paired with it (or its pairing was replaced or revoked)",
	Hint:    `ask the person for the pairing code Pixelle shows (Connect locally) and call tool=pair with {"code":"…"}`}

// errNotRunning is the in-process agent's answer while no relay runs.
func errNotRunning() error { return offline("the Pixelle relay is not running") }

// target is the session the in-process agent drives (see above). rl may
// be nil: no relay runs.
func (rl *relay) target() (*session, error) {
	if rl == nil {
		return nil, errNotRunning()
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return rl.targetLocked()
}

// targetLocked is target under rl.mu.
func (rl *relay) targetLocked() (*session, error) {
	if rl.closed {
		return nil, errNotRunning()
	}
	if sess := rl.sessions[rl.bridgeSession]; sess != nil && rl.bridgeToken != "" && sess.agentToken != "" &&
		hub.SecretEqual(sess.agentToken, rl.bridgeToken) {
		if sess.browser == nil {
			return nil, offline(msgOffline)
		}
		return sess, nil
	}
	for _, sess := range rl.sessions {
		if sess.browser != nil {
			return nil, errNoPairing
		}
	}
	return nil, offline(msgOffline)
}

var (
	noParams   = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	idsSchema  = `{"type":"object","properties":{"ids":{"type":"array","items":{"type":"string"}}},"required":["ids"]}`
	mutSchema  = `{"type":"object","properties":{"expectedRevision":{"type":"integer","description":"the revision the change is based on (read state first)"},"operationId":{"type":"string","description":"1-80 letters, digits, _ or -; derived from the arguments when left out"},"params":%s},"required":["expectedRevision","params"],"additionalProperties":false}`
	pairSchema = json.RawMessage(`{"type":"object","properties":{"code":{"type":"string","description":"the 12 hex digits Pixelle shows"}},"required":["code"],"additionalProperties":false}`)
)

// bridgeTools are the §6 methods and pair, in the order /k lists them.
var bridgeTools = []adapters.BridgeTool{
	{Name: "state.read", Read: true, InputSchema: noParams, Description: "project, title, revision, selection, compact nodes and edges"},
	{Name: "selection.read", Read: true, InputSchema: noParams, Description: "the selected nodes in full, with the revision and missing IDs"},
	{Name: "nodes.read", Read: true, InputSchema: json.RawMessage(`{"type":"object","properties":{"params":` + idsSchema + `},"required":["params"],"additionalProperties":false}`),
		Description: "the named nodes in full, with the revision and missing IDs"},
	{Name: "events.read", Read: true, InputSchema: noParams, Description: "the revision and recent activity events"},
	{Name: "project.export", Read: true, InputSchema: noParams, Description: "the portable version 1 project, full nodes and edges"},
	{Name: "nodes.upsert", InputSchema: json.RawMessage(fmt.Sprintf(mutSchema, `{"type":"object","properties":{"nodes":{"type":"array"},"edges":{"type":"array"}}}`)),
		Description: "patch existing nodes and create the others (kind, title, content, optional x/y); edges between existing nodes"},
	{Name: "nodes.delete", InputSchema: json.RawMessage(fmt.Sprintf(mutSchema, idsSchema)), Description: "delete the named nodes"},
	{Name: "selection.set", InputSchema: json.RawMessage(fmt.Sprintf(mutSchema, idsSchema)), Description: "select the named nodes"},
	{Name: "viewport.focus", InputSchema: json.RawMessage(fmt.Sprintf(mutSchema, idsSchema)), Description: "select the named nodes and pan to the first"},
	{Name: toolPair, InputSchema: pairSchema, Description: "pair with the canvas using the code Pixelle shows (replaces earlier agents of that canvas)"},
}

// BridgeTools implements adapters.ToolBridge: nothing while no browser is
// connected, only pair while none is paired, else every tool.
func (s *Server) BridgeTools() ([]adapters.BridgeTool, error) {
	if rb := s.followed(); rb != nil {
		return rb.BridgeTools()
	}
	_, err := s.cur.Load().target()
	switch {
	case err == errNoPairing:
		return bridgeTools[len(bridgeTools)-1:], nil
	case err != nil:
		return nil, err
	}
	return slices.Clone(bridgeTools), nil
}

// BridgeClassify implements adapters.ToolBridge: the method's kind, after
// the §6 checks the relay's own agent client makes, so a malformed
// command is refused before anything is journaled.
func (s *Server) BridgeClassify(tool string, args json.RawMessage) (bool, error) {
	if rb := s.followed(); rb != nil {
		return rb.BridgeClassify(tool, args)
	}
	_, err := s.cur.Load().target()
	if tool == toolPair {
		if err != nil && err != errNoPairing {
			return false, err
		}
		_, err := pairArgs(args)
		return false, err
	}
	if err != nil {
		return false, err
	}
	return readsOnly(tool, args)
}

// BridgeCall implements adapters.ToolBridge: the browser's result, or its
// error (and the relay's) as a *adapters.ToolError whose message is the
// error object unchanged.
func (s *Server) BridgeCall(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	if rb := s.followed(); rb != nil {
		return rb.BridgeCall(ctx, tool, args)
	}
	rl := s.cur.Load()
	if tool == toolPair {
		code, err := pairArgs(args)
		if err != nil {
			return nil, err
		}
		if rl == nil {
			return nil, errNotRunning()
		}
		return rl.pairInProcess(code)
	}
	cmd, _, err := commandFor(tool, args)
	if err != nil {
		return nil, err
	}
	if rl == nil {
		return nil, errNotRunning()
	}
	a, err := rl.route(ctx, cmd)
	if err != nil {
		return nil, err
	}
	if a.err != nil {
		return nil, commandError(a.err)
	}
	return a.result, nil
}

// readsOnly classifies a tool call after commandFor's checks.
func readsOnly(tool string, args json.RawMessage) (bool, error) {
	_, spec, err := commandFor(tool, args)
	return err == nil && !spec.mutation, err
}

// commandFor builds the §6 command of a tool call: args plus "method",
// plus a derived operationId for a mutation that has none, checked by
// ValidateCommand.
func commandFor(tool string, args json.RawMessage) (json.RawMessage, methodSpec, error) {
	if tool == "project.import" {
		return nil, methodSpec{}, &adapters.ToolError{Code: codeNotAllowed, Message: "project.import is browser-only, never an agent operation"}
	}
	spec, ok := methods[tool]
	if !ok {
		return nil, spec, &adapters.ToolError{Code: codeUnknownMethod, Message: fmt.Sprintf("no tool %q; the canvas API has %s, and pair", tool, knownMethods())}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil || fields == nil {
		return nil, spec, &adapters.ToolError{Code: codeInvalid, Message: "the arguments must be a JSON object: the command without its method"}
	}
	if m, has := fields["method"]; has && string(m) != quote(tool) {
		return nil, spec, &adapters.ToolError{Code: codeInvalid, Message: "the tool names the method: leave \"method\" out of the arguments"}
	}
	fields["method"] = json.RawMessage(quote(tool))
	if _, has := fields["operationId"]; spec.mutation && !has {
		fields["operationId"] = json.RawMessage(quote(deriveOperationID(fields)))
	}
	raw, err := json.Marshal(fields)
	if err == nil {
		var cmd json.RawMessage
		if cmd, err = ValidateCommand(raw); err == nil {
			return cmd, spec, nil
		}
	}
	return nil, spec, &adapters.ToolError{Code: codeInvalid, Message: err.Error()}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// deriveOperationID is the operationId of a mutation that came without
// one: "op-" and the first 32 hex digits of the SHA-256 of the command
// (method included, operationId absent) re-encoded canonically — every
// object's keys sorted, numbers as written, strings re-escaped. The same
// intent always gets the same id, so a retry the browser may already have
// applied is answered as a replay (§6.4); a new intent differs at least in
// its expectedRevision. An agent that means to repeat an identical
// command gives its own operationId.
func deriveOperationID(fields map[string]json.RawMessage) string {
	h := sha256.New()
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "%s=%s\n", quote(k), canonical(fields[k]))
	}
	return "op-" + hex.EncodeToString(h.Sum(nil))[:32]
}

// canonical re-encodes JSON with sorted keys and numbers as written.
func canonical(raw json.RawMessage) []byte {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

func pairArgs(args json.RawMessage) (string, error) {
	var a struct {
		Code *string `json:"code"`
	}
	if json.Unmarshal(args, &a) != nil || a.Code == nil {
		return "", &adapters.ToolError{Code: codeInvalid, Message: `pair takes {"code":"…"}, the 12 hex digits Pixelle shows`}
	}
	code, ok := normalizeCode(*a.Code)
	if !ok {
		return "", &adapters.ToolError{Code: codeInvalid, Message: "a pairing code is 12 hex digits"}
	}
	return code, nil
}

// pairInProcess is POST /api/pair for the in-process agent: the same rate
// limit (all loopback callers share one budget) and the same pairing; the
// token stays inside the relay.
func (rl *relay) pairInProcess(code string) (json.RawMessage, error) {
	rl.mu.Lock()
	running := !rl.closed
	ok := running && rl.rate.allow(hub.LoopbackHost, rl.s.Now())
	rl.mu.Unlock()
	switch {
	case !running:
		return nil, errNotRunning()
	case !ok:
		return nil, &adapters.ToolError{Code: "RATE_LIMITED", Message: "too many pairing attempts; wait a minute", Retryable: true}
	}
	res, err := rl.pairCode(code)
	if err != nil {
		return nil, &adapters.ToolError{Code: "INVALID_OR_EXPIRED_CODE", Message: "the code is wrong, used or expired (codes live 5 minutes)",
			Hint: "ask the person for the code Pixelle shows now"}
	}
	rl.mu.Lock()
	rl.bridgeSession, rl.bridgeToken = res.SessionID, res.Token
	rl.mu.Unlock()
	return json.Marshal(map[string]any{"paired": true, "relay": res.URL})
}

// route sends cmd to the target session's browser as an agent command and
// waits for its answer: the browser's, or the relay's own error.
func (rl *relay) route(ctx context.Context, cmd json.RawMessage) (relayAnswer, error) {
	var o outbox
	rl.mu.Lock()
	sess, err := rl.targetLocked()
	if err != nil {
		rl.mu.Unlock()
		return relayAnswer{}, err
	}
	rl.touchLocked()
	if len(sess.pending) >= rl.s.MaxInFlight {
		rl.mu.Unlock()
		return relayAnswer{}, commandError(mustJSON(errorObject{"BUSY", msgBusy}))
	}
	rl.nextReq++
	relayID := newRelayID(rl.nextReq)
	pe := &pending{relayID: relayID, local: make(chan relayAnswer, 1)}
	pe.timer = rl.env.Guard.AfterFunc("command timeout", rl.s.CommandTimeout, func() { rl.commandTimeout(sess, relayID) })
	sess.pending[relayID] = pe
	o.sendRaw(sess.browser, commandFrame(relayID, cmd))
	rl.mu.Unlock()
	rl.env.Activity.AgentActivity()
	o.flush()
	select {
	case a := <-pe.local:
		return a, nil
	case <-ctx.Done():
	}
	rl.mu.Lock()
	mine := sess.pending[relayID] == pe
	if mine {
		pe.timer.Stop()
		delete(sess.pending, relayID)
	}
	rl.mu.Unlock()
	if !mine { // answered meanwhile
		return <-pe.local, nil
	}
	return relayAnswer{}, &adapters.ToolError{Code: "OUTCOME_UNKNOWN", Retryable: true,
		Message: "the caller gave up before the browser answered; the command may have been applied", Hint: hintFor("OUTCOME_UNKNOWN")}
}

func mustJSON(v any) json.RawMessage { b, _ := json.Marshal(v); return b }

// commandError is an error object (the browser's or the relay's) as a
// ToolError: its code, the object itself unchanged as the message (§6.4:
// never hidden), what to do, and whether the same URL's retry can help.
func commandError(obj json.RawMessage) error {
	var e struct {
		Code string `json:"code"`
	}
	json.Unmarshal(obj, &e)
	if e.Code == "" {
		e.Code = "BROWSER_ERROR"
	}
	te := &adapters.ToolError{Code: e.Code, Message: string(obj), Hint: hintFor(e.Code)}
	switch e.Code {
	case "OUTCOME_UNKNOWN", "BUSY":
		te.Retryable = true
	case adapters.CodeBrowserOffline:
		te.Retryable, te.Err = true, adapters.ErrNoPage
	}
	return te
}

// hintFor says what to do about a code (§5.4, §6.4), in plugin terms.
func hintFor(code string) string {
	switch code {
	case "OUTCOME_UNKNOWN":
		return "the command may have been applied: read state (tool=state.read), or fetch the retry URL, which re-sends it with the same operationId"
	case "REVISION_CONFLICT":
		return "read state (tool=state.read) and rebase onto its revision"
	case "OPERATION_REUSED":
		return "this operationId was used for different content: give a new one"
	case adapters.CodeBrowserOffline:
		return "ask the person to open Pixelle and click Connect locally"
	case "BUSY":
		return "wait for earlier commands to finish and retry"
	}
	return ""
}
