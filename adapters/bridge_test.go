package adapters

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

func TestReadOnlyTool(t *testing.T) {
	for _, tc := range []struct {
		name, annotations string
		read              bool
	}{
		// The page's own hint decides, both ways.
		{"scene.describe", `{"readOnlyHint":false}`, false},
		{"stitch.add", `{"readOnlyHint":true}`, true},
		// An annotation without the hint leaves it to the name.
		{"scene.describe", `{"title":"Describe"}`, true},
		{"scene.describe", `not json`, true},
		// Read verbs first or last in the action.
		{"scene.describe", "", true},
		{"state.read", "", true},
		{"nodes.read", "", true},
		{"getSceneInfo", "", true},
		{"get_scene", "", true},
		{"list-nodes", "", true},
		{"scene_info", "", true},
		{"design/status", "", true},
		{"render", "", true},
		{"HTMLPreview", "", true},
		// Mutations, and anything the rule does not know.
		{"nodes.upsert", "", false},
		{"selection.set", "", false},
		{"viewport.focus", "", false},
		{"stitch.add", "", false},
		{"get_and_set", "", false},
		{"render.save", "", false},
		{"list.clear", "", false},
		{"readme.update", "", false},
		{"fail", "", false},
		{"frobnicate", "", false},
		{"", "", false},
		{"describe.scene", "", false}, // the verb must be the action's, after the last dot
	} {
		t.Run(fmt.Sprintf("%s %s", tc.name, tc.annotations), func(t *testing.T) {
			if got := ReadOnlyTool(tc.name, json.RawMessage(tc.annotations)); got != tc.read {
				t.Errorf("ReadOnlyTool(%q, %q) = %v, want %v", tc.name, tc.annotations, got, tc.read)
			}
		})
	}
}

func TestWords(t *testing.T) {
	for in, want := range map[string]string{
		"getSceneInfo": "[get scene info]",
		"HTMLNode":     "[html node]",
		"scene_info-2": "[scene info 2]",
		"node2Read":    "[node2 read]",
		"..":           "[]",
	} {
		if got := fmt.Sprint(words(in)); got != want {
			t.Errorf("words(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestNoPage(t *testing.T) {
	err := error(NoPage("no tab", "open it"))
	var te *ToolError
	if !errors.Is(err, ErrNoPage) || !errors.As(err, &te) || te.Code != CodeBrowserOffline || !te.Retryable || err.Error() != "BROWSER_OFFLINE: no tab" {
		t.Fatal(err)
	}
}
