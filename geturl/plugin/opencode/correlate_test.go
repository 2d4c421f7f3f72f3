package opencode

import (
	"strings"
	"testing"
)

func user(id string) ocMessage {
	m := ocMessage{}
	m.Info.ID, m.Info.Role = id, "user"
	return m
}

func asst(id, parent, finish string, completed bool, text string, tools ...string) ocMessage {
	m := ocMessage{}
	m.Info.ID, m.Info.Role, m.Info.ParentID, m.Info.Finish = id, "assistant", parent, finish
	m.Info.ProviderID, m.Info.ModelID = "fake", "m"
	if completed {
		m.Info.Time.Completed = 1
	}
	if text != "" {
		m.Parts = append(m.Parts, ocPart{Type: "text", Text: text})
	}
	for _, tl := range tools {
		m.Parts = append(m.Parts, ocPart{Type: "tool", Tool: tl, State: &struct {
			Status string `json:"status"`
		}{"completed"}})
	}
	return m
}

func withError(m ocMessage, name string) ocMessage {
	m.Info.Error = &struct {
		Name string `json:"name"`
		Data struct {
			Message string `json:"message"`
		} `json:"data"`
	}{Name: name}
	return m
}

func TestCorrelate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		msgs  []ocMessage
		busy  bool
		state string
		text  string
		steps int
	}{
		{"not admitted", []ocMessage{user("msg_b")}, false, TurnUnknown, "", 0},
		{"admitted, no answer yet", []ocMessage{user("msg_a")}, true, TurnPending, "", 0},
		{"streaming", []ocMessage{user("msg_a"), asst("msg_a1", "msg_a", "", false, "partial")}, true, TurnRunning, "partial", 1},
		{"tool step then final", []ocMessage{user("msg_a"), asst("msg_a1", "msg_a", "tool-calls", true, "", "bash"), asst("msg_a2", "msg_a", "stop", true, "done")}, false, TurnCompleted, "done", 2},
		{"tool step, loop still going", []ocMessage{user("msg_a"), asst("msg_a1", "msg_a", "tool-calls", true, "", "bash")}, true, TurnRunning, "", 1},
		{"tool step, loop stopped", []ocMessage{user("msg_a"), asst("msg_a1", "msg_a", "tool-calls", true, "", "bash")}, false, TurnAborted, "", 1},
		{"aborted", []ocMessage{user("msg_a"), withError(asst("msg_a1", "msg_a", "", true, "half"), "MessageAbortedError")}, false, TurnAborted, "half", 1},
		{"provider error", []ocMessage{user("msg_a"), withError(asst("msg_a1", "msg_a", "", true, ""), "APIError")}, false, TurnError, "", 1},
		// The last message of the session answers someone else's later
		// prompt: it must not be taken for ours.
		{"a later turn is last", []ocMessage{user("msg_a"), asst("msg_a1", "msg_a", "stop", true, "ours"), user("msg_z"), asst("msg_z1", "msg_z", "stop", true, "theirs")}, false, TurnCompleted, "ours", 1},
		{"ours still running while another finished", []ocMessage{user("msg_z"), asst("msg_z1", "msg_z", "stop", true, "theirs"), user("msg_a")}, true, TurnPending, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Correlate(tc.msgs, "msg_a", tc.busy)
			if r.State != tc.state || r.Text != tc.text || len(r.Steps) != tc.steps || r.MessageID != "msg_a" {
				t.Fatalf("Correlate = %+v, want state %s text %q steps %d", r, tc.state, tc.text, tc.steps)
			}
		})
	}
}

func TestCorrelateTruncatesOnRuneBoundary(t *testing.T) {
	long := strings.Repeat("é", maxResultText) // 2 bytes each
	r := Correlate([]ocMessage{user("msg_a"), asst("msg_a1", "msg_a", "stop", true, "x"+long)}, "msg_a", false)
	if !r.Truncated || len(r.Text) > maxResultText || !strings.HasSuffix(r.Text, "é") {
		t.Fatalf("truncated %v len %d", r.Truncated, len(r.Text))
	}
}
