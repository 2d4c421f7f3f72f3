package geturl

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
)

// pageSteps returns the browser tests' two step helpers on ctx: run does
// steps and fails the test naming what, text reads the text of sel.
func pageSteps(t *testing.T, ctx context.Context) (run func(what string, steps ...chromedp.Action[chromedp.Void]), text func(what, sel string) string) {
	run = func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text = func(what, sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return s
	}
	return run, text
}
