package adaptertest

import (
	"context"
	"os"
	"testing"

	"github.com/chromedp/chromedp"
)

// ChromiumPath is where Debian's chromium package installs the browser.
const ChromiumPath = "/usr/bin/chromium"

// RequireChromium skips a real-browser test when Chromium is not installed,
// unless $CI is set: CI installs it, so its absence there is a failure.
func RequireChromium(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(ChromiumPath); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but %s is missing: %v", ChromiumPath, err)
		}
		t.Skipf("%s not installed", ChromiumPath)
	}
}

// Chromium returns a chromedp context for a fresh headless Chromium (own
// profile in a temp dir), a child of parent, and the function that closes
// the browser. The flags keep it off the network: on a closed machine its
// background connections would only fail. opts come after these (a flag
// given again replaces it), e.g. to load an extension.
func Chromium(t testing.TB, parent context.Context, opts ...chromedp.ExecAllocatorOption) (context.Context, context.CancelFunc) {
	t.Helper()
	RequireChromium(t)
	actx, cancelAlloc := chromedp.NewExecAllocator(parent, append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(ChromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	}, opts...)...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	return ctx, func() { cancelCtx(); cancelAlloc() }
}
