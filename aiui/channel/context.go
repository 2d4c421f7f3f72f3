package channel

import (
	"fmt"
	"strings"

	"github.com/hubdev/hub/aiui/frame"
)

// Preamble is the tab/source/selection context block shared by
// text-concat and intent-v1. It is empty when the client sent no context,
// so a bare client's prompt is exactly its text.
func Preamble(meta *frame.HelloMeta, selection string) string {
	var lines []string
	if meta != nil && meta.Tab != nil {
		t := meta.Tab
		switch {
		case t.Title != "" && t.URL != "":
			lines = append(lines, fmt.Sprintf("Browser tab: %q (%s)", t.Title, t.URL))
		case t.URL != "":
			lines = append(lines, "Browser tab: "+t.URL)
		case t.Title != "":
			lines = append(lines, fmt.Sprintf("Browser tab: %q", t.Title))
		}
	}
	if meta != nil && meta.Source != nil && meta.Source.Root != "" {
		lines = append(lines, "Source root: "+meta.Source.Root)
	}
	if selection != "" {
		lines = append(lines, fmt.Sprintf("Selected text: %q", selection))
	}
	if len(lines) == 0 {
		return ""
	}
	return "[context]\n" + strings.Join(lines, "\n") + "\n[/context]\n\n"
}

// MetaAttributes renders a hello's context as notification meta
// attributes: identifier keys, string values.
func MetaAttributes(meta *frame.HelloMeta) map[string]string {
	out := map[string]string{}
	if meta == nil {
		return out
	}
	if t := meta.Tab; t != nil {
		set := func(k, v string) {
			if v != "" {
				out[k] = v
			}
		}
		set("tab_url", t.URL)
		set("tab_title", t.Title)
		set("target_id", t.TargetID)
		for k, p := range map[string]*int64{"chrome_tab_id": t.ChromeTabID, "window_id": t.WindowID, "tab_index": t.TabIndex} {
			if p != nil {
				out[k] = fmt.Sprint(*p)
			}
		}
	}
	if meta.Source != nil && meta.Source.Root != "" {
		out["source_root"] = meta.Source.Root
	}
	return out
}
