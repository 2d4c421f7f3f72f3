package aiui

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hubdev/hub/adapters/adaptertest"
	"github.com/hubdev/hub/aiui/frame"
	"github.com/hubdev/hub/aiui/intent"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "rewrite testdata/debug-viewer.png from the /debug Chromium test")

// workbenchPage stands in for the app the overlay captures: its shots are
// real Chromium screenshots of these two components, at the regions the
// recorded turns name.
const workbenchPage = `<!doctype html><meta charset="utf-8"><title>workbench</title>
<style>body{margin:0;font:13px system-ui;background:#fff}#plot,#table{border:1px solid #ccd;margin:8px;position:relative}
#plot{width:740px;height:300px}#table{width:750px;height:140px;overflow:hidden}
.legend{position:absolute;left:470px;top:40px;background:#fffe;border:1px solid #bbc;padding:4px 8px}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #e4e4ea;padding:3px 8px;text-align:left}</style>
<div id=plot><svg width=740 height=300>
<g stroke="#e4e4ea">` + gridLines + `</g>
<polyline fill=none stroke="#2457c5" stroke-width=2 points="20,220 90,200 160,120 230,160 300,90 370,140 440,70 510,110 580,60 650,100 720,80"/>
<polyline fill=none stroke="#999" stroke-width=1 points="20,250 720,245"/>
</svg><div class=legend><b>— spectrum</b><br>— baseline</div></div>
<div id=table><table><tr><th>sample</th><th>peak Hz</th><th>energy</th><th>note</th></tr>
<tr><td>S-01</td><td>440.0</td><td>0.82</td><td>reference</td></tr><tr><td>S-02</td><td>442.3</td><td>0.77</td><td></td></tr>
<tr><td>S-03</td><td>438.9</td><td>0.91</td><td>clipped</td></tr><tr><td>S-04</td><td>441.1</td><td>0.64</td><td></td></tr></table></div>`

const gridLines = `<line x1=0 y1=50 x2=740 y2=50 /><line x1=0 y1=100 x2=740 y2=100 /><line x1=0 y1=150 x2=740 y2=150 />` +
	`<line x1=0 y1=200 x2=740 y2=200 /><line x1=0 y1=250 x2=740 y2=250 />`

// TestDebugViewerInChromium streams three recorded intent-v1 turns (a
// dictation with a typed correction the channel diffs, ink with a region
// shot, then the full turn: two talk segments with their audio and a
// region shot) while /debug is open in Chromium, and checks that the page
// follows the turn live (no reload), shows each thread's stages in order
// with the lowered prompt as the agent received it, plays the audio from
// the trace blob store, and previews a shot on hover.
func TestDebugViewerInChromium(t *testing.T) {
	adaptertest.RequireChromium(t)
	// the correction diff's upstream answers with the recorded patch
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]string{"content": correctionPatch}}}})
	}))
	defer upstream.Close()
	t.Setenv("AIUI_DEBUG_TEST_KEY", "test-key")
	h, _ := start(t, func(c *Config, _ *Server) { c.TranscribeBaseURL, c.APIKeyEnv = upstream.URL, "AIUI_DEBUG_TEST_KEY" })
	ctx, cancel := adaptertest.Chromium(t, context.Background())
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	defer cancelT()
	poll := chromedp.WithPollingTimeout(20 * time.Second)
	until := func(what, expr string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, poll)); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	eval := func(expr string, out any) {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		if err := json.Unmarshal(v, out); err != nil {
			t.Fatalf("evaluate %s: %s: %v", expr, v, err)
		}
	}

	// The region shots, captured as the overlay captures them.
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(workbenchPage))
	}))
	defer site.Close()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(site.URL)); err != nil {
		t.Fatal(err)
	}
	plot, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("#plot")))
	if err != nil {
		t.Fatal(err)
	}
	table, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("#table")))
	if err != nil {
		t.Fatal(err)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(h.URL("/debug"))); err != nil {
		t.Fatal(err)
	}
	until("the live feed", `document.getElementById("live").dataset.state === "live"`)
	eval(`window.notReloaded = true`, new(bool))

	hello := &frame.HelloMeta{Tab: &frame.TabInfo{Title: "workbench", URL: "http://localhost:5173/"},
		Source: &frame.SourceInfo{Root: "/repo/workbench"}, Intent: json.RawMessage(`{"transcriber":"mock"}`)}

	// The correction turn: its typed correction arrives as a request (no
	// patch), the channel diffs it and merges the result.
	corr := *hello
	corr.Intent = json.RawMessage(`{"transcriber":"mock","corrector":"openai","correctionModel":"diff-test"}`)
	fix := newTurn(t, h, "correction-turn", &corr)
	events := recordedTurn(t, "dictation-typed-correction.json")
	for i := range events {
		if events[i].Type == intent.TypeCorrection {
			events[i].Patch, events[i].Model, events[i].LatencyMS = "", "", 0
		}
	}
	fix.events(events, true)
	until("the correction turn delivered", `document.querySelector('.thread[data-thread-id="correction-turn"]')?.dataset.state === "delivered"`)
	var merged string
	eval(`document.querySelector('.thread[data-thread-id="correction-turn"] tr[data-stage="merged events"] td.detail').textContent`, &merged)
	if !strings.Contains(merged, "correction") || !strings.Contains(merged, "diff-test") {
		t.Fatalf("merged events row: %q", merged)
	}

	// The ink turn, in one go.
	ink := newTurn(t, h, "ink-turn", hello)
	events = recordedTurn(t, "ink-and-region-shot.json")
	closeAt := slices.IndexFunc(events, func(e intent.Event) bool { return e.Type == intent.TypeThreadClose })
	ink.events(events[:closeAt], false)
	ink.attachment("shot_1", "image/png", plot)
	ink.events(events[closeAt:], true)
	until("the ink turn delivered", `document.querySelector('.thread[data-thread-id="ink-turn"]')?.dataset.state === "delivered"`)

	// The full turn, batch by batch, watched live.
	full := newTurn(t, h, "full-turn", hello)
	events = recordedTurn(t, "full-turn-send.json")
	shotAt := slices.IndexFunc(events, func(e intent.Event) bool { return e.Type == intent.TypeShot })
	closeAt = slices.IndexFunc(events, func(e intent.Event) bool { return e.Type == intent.TypeThreadClose })
	full.events(events[:shotAt], false)
	full.attachment("seg_1", "audio/wav", tone(0.3, 440))
	until("the open turn's first compose, live", `(() => {
		const c = document.querySelector('.thread[data-thread-id="full-turn"]');
		return c && c.dataset.state === "open" && c.open &&
			c.querySelector('tr[data-stage="speculative compose"]')?.textContent.includes("make the baseline curve a bit thicker and color it amber");
	})()`)
	full.events(events[shotAt:shotAt+1], false)
	full.attachment("shot_1", "image/png", table)
	full.events(events[shotAt+1:closeAt], false)
	full.attachment("seg_2", "audio/wav", tone(0.3, 660))
	full.events(events[closeAt:], true)
	until("the full turn delivered", `document.querySelector('.thread[data-thread-id="full-turn"]')?.dataset.state === "delivered"`)
	var stayed bool
	if eval(`window.notReloaded === true`, &stayed); !stayed {
		t.Fatal("the page reloaded to follow the turn")
	}

	// The timeline: every stage in order, offsets rising, the prompt as delivered.
	var rows []struct {
		Stage, MS string
	}
	eval(`[...document.querySelectorAll('.thread[data-thread-id="full-turn"] tr.stage')].map((r) =>
		({Stage: r.dataset.stage, MS: r.querySelector(".ms").textContent}))`, &rows)
	var stages []string
	for _, r := range rows {
		stages = append(stages, r.Stage)
	}
	want := []string{"hello", "client context", "prompt preamble", "speculative compose", "attachment", "condition",
		"speculative compose", "attachment", "condition", "speculative compose", "attachment", "condition",
		"speculative compose", "composed intent", "conditioned", "lowered prompt", "closed"}
	if !slices.Equal(stages, want) {
		t.Fatalf("timeline rows:\n got %q\nwant %q", stages, want)
	}
	if rows[0].MS == "" || rows[len(rows)-1].MS[0] != '+' {
		t.Fatalf("offsets: %+v", rows)
	}
	recs := records(t, h)
	if len(recs) != 3 || !strings.Contains(recs[0].Text, "make the baseline curb") {
		t.Fatalf("delivered %d prompts: %+v", len(recs), recs)
	}
	for i, id := range []string{"correction-turn", "ink-turn", "full-turn"} {
		var lowered string
		eval(`document.querySelector('.thread[data-thread-id="`+id+`"] pre.lowered').textContent`, &lowered)
		if lowered != recs[i].Text {
			t.Fatalf("%s: the viewer's lowered prompt:\n%s\nthe agent's:\n%s", id, lowered, recs[i].Text)
		}
	}
	var opened []bool
	eval(`["correction-turn", "ink-turn", "full-turn"].map((id) => document.querySelector('.thread[data-thread-id="' + id + '"]').open)`, &opened)
	if !slices.Equal(opened, []bool{false, true, true}) {
		t.Fatalf("open threads (oldest first): %v, want the newest two", opened)
	}
	var audios []string
	eval(`[...document.querySelectorAll('.thread[data-thread-id="full-turn"] .attachments audio')].map((a) => a.getAttribute("src"))`, &audios)
	if len(audios) != 2 {
		t.Fatalf("audio players: %q", audios)
	}
	if r := h.Do(adaptertest.Request{Path: audios[0]}); r.Status != 200 || r.Header.Get("Content-Type") != "audio/wav" || !bytes.HasPrefix(r.Body, []byte("RIFF")) {
		t.Fatalf("%s: %d %s", audios[0], r.Status, r.Header.Get("Content-Type"))
	}

	// Hover the path the agent received: the shot previews from the blob store.
	if *updateScreenshot {
		// the whole page in one picture, for the README
		var height int64
		eval(`document.documentElement.scrollHeight`, &height)
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, min(height, 3000))); err != nil {
			t.Fatal(err)
		}
	}
	shotPath := recs[2].Meta["shot_1"]
	cited := `.thread[data-thread-id="full-turn"] .meta .path.has-preview`
	var where []float64 // the middle of its first line: a wrapped path's box has gaps
	eval(`(() => { const e = document.querySelector('`+cited+`'); e.scrollIntoView({block: "nearest"});
		const r = e.getClientRects()[0]; return [r.x + r.width / 2, r.y + r.height / 2]; })()`, &where)
	if err := chromedp.Do(ctx, chromedp.MouseEvent("mouseMoved", where[0], where[1])); err != nil {
		t.Fatal(err)
	}
	until("the hover preview", `(() => { const p = document.getElementById("preview");
		return !p.hidden && p.dataset.loaded === "yes"; })()`)
	var shown struct {
		Src, Caption, Path string
		W, H               int
	}
	eval(`(() => { const p = document.getElementById("preview"), i = p.querySelector("img");
		return {Src: i.getAttribute("src"), W: i.naturalWidth, H: i.naturalHeight, Caption: p.querySelector(".caption").textContent,
			Path: document.querySelector('`+cited+`').textContent}; })()`, &shown)
	if shown.Path != shotPath || !bytes.Contains([]byte(shown.Caption), []byte(shotPath)) {
		t.Fatalf("preview of %q: %+v", shotPath, shown)
	}
	if r := h.Do(adaptertest.Request{Path: shown.Src}); r.Status != 200 || !bytes.Equal(r.Body, table) || r.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("%s: %d, %d bytes of %s", shown.Src, r.Status, len(r.Body), r.Header.Get("Content-Type"))
	}
	if want := pngSize(t, table); shown.W != want[0] || shown.H != want[1] {
		t.Fatalf("preview %dx%d, shot %v", shown.W, shown.H, want)
	}

	if *updateScreenshot {
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", "debug-viewer.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cancel() // close the browser's live feed before the backend stops
}

// turn is one intent-v1 thread on its own /ws connection.
type turn struct {
	t  *testing.T
	c  *adaptertest.WSClient
	id string
}

func newTurn(t *testing.T, h *adaptertest.Harness, id string, hello *frame.HelloMeta) *turn {
	t.Helper()
	c := h.MustDial("/ws", adaptertest.DialOptions{})
	if r := sendAck(t, c, mustFrame(t, frame.Envelope{V: 1, Kind: "hello", Format: "intent-v1", Meta: hello}, nil)); !r.OK {
		t.Fatalf("hello: %+v", r)
	}
	return &turn{t: t, c: c, id: id}
}

func (u *turn) send(chunk *frame.ChunkDescriptor, fin bool, payload []byte) {
	u.t.Helper()
	if r := sendAck(u.t, u.c, mustFrame(u.t, frame.Envelope{V: 1, Kind: "data", ThreadID: u.id, Fin: fin, Chunk: chunk}, payload)); !r.OK {
		u.t.Fatalf("%s: %+v", u.id, r)
	}
}

func (u *turn) events(ev []intent.Event, fin bool) {
	u.t.Helper()
	b, _ := json.Marshal(intent.Batch{Events: ev})
	u.send(&frame.ChunkDescriptor{Kind: "events"}, fin, b)
}

func (u *turn) attachment(id, mime string, b []byte) {
	u.t.Helper()
	u.send(&frame.ChunkDescriptor{Kind: "attachment", ID: id, Mime: mime}, false, b)
}

// correctionPatch is the recorded turn's own diff of its correction.
const correctionPatch = "*** Begin Patch\n*** Update File: transcript\n@@\n-make the base line curb a bit thicker and color it ember\n" +
	"+make the baseline curb a bit thicker and color it ember\n*** End Patch"

// recordedTurn is one of the recorded intent-v1 event streams.
func recordedTurn(t *testing.T, name string) []intent.Event {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("intent", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var ev []intent.Event
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// tone is a mono 16 kHz PCM16 WAV of a sine, standing in for a talk
// segment's recording.
func tone(seconds, hz float64) []byte {
	const rate = 16000
	n := int(seconds * rate)
	var b bytes.Buffer
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(36+2*n))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(rate), uint32(2 * rate), uint16(2), uint16(16)} {
		binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	binary.Write(&b, binary.LittleEndian, uint32(2*n))
	for i := range n {
		binary.Write(&b, binary.LittleEndian, int16(8000*math.Sin(2*math.Pi*hz*float64(i)/rate)))
	}
	return b.Bytes()
}

// pngSize reads a PNG's width and height from its IHDR.
func pngSize(t *testing.T, png []byte) [2]int {
	t.Helper()
	if len(png) < 24 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("not a PNG: %d bytes", len(png))
	}
	return [2]int{int(binary.BigEndian.Uint32(png[16:])), int(binary.BigEndian.Uint32(png[20:]))}
}
