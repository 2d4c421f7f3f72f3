package aiui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/adapters/adaptertest"
)

// echoPage answers every call with its ns, name and args; "fail" with a
// page error.
func echoPage(t *testing.T, h *adaptertest.Harness, ns, tools string) *adaptertest.WSClient {
	return toolsPage(t, h, fmt.Sprintf(`{"v":1,"type":"register","ns":%q,"tools":%s}`, ns, tools), func(call map[string]any) string {
		if call["name"] == "fail" {
			return fmt.Sprintf(`{"v":1,"type":"result","callId":%q,"ok":false,"error":"no such thing"}`, call["callId"])
		}
		args, _ := json.Marshal(call["args"])
		return fmt.Sprintf(`{"v":1,"type":"result","callId":%q,"ok":true,"value":{"ns":%q,"name":%q,"args":%s}}`, call["callId"], call["ns"], call["name"], args)
	})
}

func bridgeErr(t *testing.T, err error) *adapters.ToolError {
	t.Helper()
	var te *adapters.ToolError
	if !errors.As(err, &te) {
		t.Fatalf("not a ToolError: %v", err)
	}
	return te
}

// bridgeModes are the ways a ToolBridge reaches a backend: in this
// process, in another one (RemoteBridge, as `hub geturl serve` reaches the
// hub's), and in another one the hub's adapter follows.
var bridgeModes = []string{"in-process", "remote", "following"}

// bridgeIn starts a backend and returns the harness pages dial and the
// bridge to it in mode.
func bridgeIn(t *testing.T, mode string) (*adaptertest.Harness, adapters.ToolBridge) {
	switch mode {
	case "remote":
		h, _ := start(t, nil)
		return h, NewRemoteBridge(h.Dirs)
	case "following":
		face, srv, _ := faceThenHub(t)
		if !strings.Contains(srv.Status().Note, "following") {
			t.Fatalf("the hub's adapter does not follow: %+v", srv.Status())
		}
		return face, srv
	}
	h, s := start(t, nil)
	return h, s
}

func TestBridgeOffline(t *testing.T) {
	idle := New(DefaultConfig()) // never served
	bridges := []adapters.ToolBridge{idle}
	for _, mode := range bridgeModes {
		_, b := bridgeIn(t, mode)
		bridges = append(bridges, b)
	}
	for _, srv := range bridges {
		_, err1 := srv.BridgeTools()
		_, err2 := srv.BridgeClassify("x", json.RawMessage(`{}`))
		_, err3 := srv.BridgeCall(context.Background(), "x", json.RawMessage(`{}`))
		for _, err := range []error{err1, err2, err3} {
			if te := bridgeErr(t, err); te.Code != adapters.CodeBrowserOffline || !errors.Is(err, adapters.ErrNoPage) {
				t.Fatal(err)
			}
		}
	}
}

// Tools are listed as ns/name and bare name; a bare name routes like
// page_tools_call (ambiguity is refused with the names to call instead),
// a namespace shared by two pages adds ns/name@clientId; classification
// follows each tool's readOnlyHint, else its name.
func TestBridgeNamesAndRouting(t *testing.T) {
	for _, mode := range bridgeModes {
		t.Run(mode, func(t *testing.T) { testBridgeNamesAndRouting(t, mode) })
	}
}

func testBridgeNamesAndRouting(t *testing.T, mode string) {
	h, s := bridgeIn(t, mode)
	// Elsewhere the backend picks among several holders at the call, so
	// a name it would refuse is classified (conservatively) and refused
	// when called.
	local := mode == "in-process"
	echoPage(t, h, "morpho", `[{"name":"get-state","description":"the sim state"},{"name":"set-params","inputSchema":{"type":"object"}},`+
		`{"name":"peek","annotations":{"readOnlyHint":false}},{"name":"fail"}]`)
	echoPage(t, h, "aztec", `[{"name":"get-state","annotations":{"readOnlyHint":true}}]`)
	list := func() string {
		tools, err := s.BridgeTools()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range tools {
			if tl.Read {
				tl.Name += "(r)"
			}
			names = append(names, tl.Name)
		}
		return strings.Join(names, " ")
	}
	if got := list(); got != "get-state(r) set-params peek fail morpho/get-state(r) morpho/set-params morpho/peek morpho/fail aztec/get-state(r)" {
		t.Fatal(got)
	}
	for _, tc := range []struct {
		tool  string
		read  bool
		code  string
		reach string // ns the call reaches
	}{
		{"get-state", false, codeAmbiguous, ""},
		{"morpho/get-state", true, "", "morpho"},
		{"aztec/get-state", true, "", "aztec"},
		{"set-params", false, "", "morpho"},
		{"peek", false, "", "morpho"},
		{"nope", false, codeUnknownTool, ""},
		{"morpho/nope", false, codeUnknownTool, ""},
	} {
		read, err := s.BridgeClassify(tc.tool, json.RawMessage(`{"k":1}`))
		code, wantRead := tc.code, tc.read
		if !local && code == codeAmbiguous {
			code, wantRead = "", true // every holder's get-state reads
		}
		if read != wantRead || (code == "") != (err == nil) || err != nil && bridgeErr(t, err).Code != code {
			t.Errorf("classify %s: %v %v", tc.tool, read, err)
		}
		out, err := s.BridgeCall(context.Background(), tc.tool, json.RawMessage(`{"k":1}`))
		switch {
		case tc.code != "" && bridgeErr(t, err).Code != tc.code:
			t.Errorf("call %s: %v", tc.tool, err)
		case tc.code == "" && (err != nil || !strings.Contains(string(out), `"ns":"`+tc.reach+`"`) || !strings.Contains(string(out), `"args":{"k":1}`)):
			t.Errorf("call %s: %s %v", tc.tool, out, err)
		}
	}
	_, err := s.BridgeCall(context.Background(), "get-state", json.RawMessage(`{}`))
	if te := bridgeErr(t, err); !strings.Contains(te.Hint, "tool=morpho/get-state, tool=aztec/get-state") || !strings.Contains(te.Message, "candidates") {
		t.Fatalf("%+v", te)
	}
	if _, err := s.BridgeCall(context.Background(), "fail", json.RawMessage(`{}`)); bridgeErr(t, err).Code != codePageError || bridgeErr(t, err).Retryable {
		t.Fatal(err)
	}
	if _, err := s.BridgeClassify("set-params", json.RawMessage(`[]`)); bridgeErr(t, err).Code != "invalid_arguments" {
		t.Fatal(err)
	}

	// A second tab of the morpho app: morpho/… is ambiguous too, and each
	// page's tool gets its own name.
	echoPage(t, h, "morpho", `[{"name":"set-params"}]`)
	if got := list(); !strings.Contains(got, "morpho/set-params morpho/set-params@c1 morpho/set-params@c3") {
		t.Fatal(got)
	}
	_, err = s.BridgeCall(context.Background(), "morpho/set-params", json.RawMessage(`{}`))
	if te := bridgeErr(t, err); te.Code != codeAmbiguous || !strings.Contains(te.Hint, "tool=morpho/set-params@c1, tool=morpho/set-params@c3") {
		t.Fatalf("%+v", te)
	}
	if out, err := s.BridgeCall(context.Background(), "morpho/set-params@c3", json.RawMessage(`{}`)); err != nil || !strings.Contains(string(out), `"name":"set-params"`) {
		t.Fatal(string(out), err)
	}
}

func TestBridgeRefusesBadAnnotations(t *testing.T) {
	h, _ := start(t, nil)
	c := h.MustDial("/tools", adaptertest.DialOptions{})
	c.SendText(`{"v":1,"type":"register","ns":"x","tools":[{"name":"a","annotations":[1]}]}`)
	if m, err := c.Next(5 * time.Second); err != nil || !strings.Contains(m.Text(), "annotations must be a JSON object") {
		t.Fatal(m.Text(), err)
	}
}

// A backend run elsewhere that stopped is not running (retryable), not
// offline, and a call to it is known not to have run.
func TestRemoteBridgeBackendGone(t *testing.T) {
	h, _ := start(t, nil)
	rb := NewRemoteBridge(h.Dirs)
	echoPage(t, h, "morpho", `[{"name":"set-params"}]`)
	if _, err := rb.BridgeTools(); err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	_, err1 := rb.BridgeTools()
	_, err2 := rb.BridgeCall(context.Background(), "set-params", json.RawMessage(`{}`))
	for _, err := range []error{err1, err2} {
		if te := bridgeErr(t, err); te.Code != adapters.CodeNotRunning || !te.Retryable {
			t.Fatalf("%+v", te)
		}
	}
}
