package opencode

import "strings"

// Turn states.
const (
	TurnUnknown   = "unknown"   // no user message with that id: not admitted
	TurnPending   = "pending"   // admitted, no assistant answer yet
	TurnRunning   = "running"   // the assistant is still working on it
	TurnCompleted = "completed" // the final assistant message finished
	TurnError     = "error"     // the final assistant message carries an error
	TurnAborted   = "aborted"   // aborted or interrupted before it finished
)

// maxResultText bounds the reply text one result carries.
const maxResultText = 16 << 10

// TurnResult is the outcome of one admitted user message.
type TurnResult struct {
	MessageID string `json:"messageID"`
	State     string `json:"state"`
	// Text is the final assistant message's text (truncated to 16 KiB).
	Text      string `json:"text,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	Finish    string `json:"finish,omitempty"`
	Error     string `json:"error,omitempty"`
	// Steps are the assistant message ids answering the turn, in order.
	Steps []string `json:"steps,omitempty"`
	// Tools are the tool calls made during the turn: "bash:completed".
	Tools []string `json:"tools,omitempty"`
	Model string   `json:"model,omitempty"`
}

// Correlate finds the answer to user message userID among msgs: the
// assistant messages whose parentID is exactly userID. Whatever else the
// session holds, a later prompt from someone else included, never counts.
// busy says whether the session is still running.
func Correlate(msgs []ocMessage, userID string, busy bool) TurnResult {
	r := TurnResult{MessageID: userID, State: TurnUnknown}
	var steps []ocMessage
	for _, m := range msgs {
		switch {
		case m.Info.ID == userID && m.Info.Role == "user":
			r.State = TurnPending
		case m.Info.Role == "assistant" && m.Info.ParentID == userID:
			steps = append(steps, m)
		}
	}
	if len(steps) > 0 && r.State == TurnUnknown {
		// Only possible if the user message fell out of a limited page.
		r.State = TurnPending
	}
	if len(steps) == 0 {
		return r
	}
	for _, s := range steps {
		r.Steps = append(r.Steps, s.Info.ID)
		for _, p := range s.Parts {
			if p.Type == "tool" && p.Tool != "" {
				st := ""
				if p.State != nil {
					st = p.State.Status
				}
				r.Tools = append(r.Tools, p.Tool+":"+st)
			}
		}
	}
	last := steps[len(steps)-1]
	r.Finish = last.Info.Finish
	if last.Info.ProviderID != "" {
		r.Model = last.Info.ProviderID + "/" + last.Info.ModelID
	}
	var text strings.Builder
	for _, p := range last.Parts {
		if p.Type == "text" && !p.Synthetic {
			text.WriteString(p.Text)
		}
	}
	r.Text = text.String()
	if len(r.Text) > maxResultText {
		r.Text, r.Truncated = cutUTF8(r.Text, maxResultText), true
	}
	switch {
	case last.Info.Error != nil:
		r.State = TurnError
		r.Error = last.Info.Error.Name
		if last.Info.Error.Data.Message != "" {
			r.Error += ": " + last.Info.Error.Data.Message
		}
		if last.Info.Error.Name == "MessageAbortedError" {
			r.State = TurnAborted
		}
	case last.Info.Time.Completed == 0:
		r.State = TurnRunning
		if !busy {
			r.State = TurnAborted
		}
	case last.Info.Finish == "tool-calls" || last.Info.Finish == "":
		// A step that called tools is followed by another step.
		r.State = TurnRunning
		if !busy {
			r.State = TurnAborted
		}
	default:
		r.State = TurnCompleted
	}
	return r
}

// cutUTF8 cuts s to at most n bytes on a rune boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
