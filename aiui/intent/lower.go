package intent

import (
	"strings"
)

// Prompt is one lowered prompt: the notification content and its meta.
type Prompt struct {
	Content string            `json:"content"`
	Meta    map[string]string `json:"meta"`
}

// Lower assembles the Option-C prompt for a composed turn: the preamble,
// then the body with {shot_N} tokens; meta maps each received shot_N to
// its absolute path. It returns ok=false for a cancelled or empty turn,
// which lowers to no notification.
func Lower(c *Composed, preamble string) (Prompt, bool) {
	if c.Cancelled {
		return Prompt{}, false
	}
	body := c.Body()
	if strings.TrimSpace(body) == "" {
		return Prompt{}, false
	}
	meta := map[string]string{}
	for _, it := range c.Items {
		if it.Kind == ItemShot && it.Shot.Path != "" {
			meta[it.Shot.Marker] = it.Shot.Path
		}
	}
	return Prompt{Content: preamble + body, Meta: meta}, true
}
