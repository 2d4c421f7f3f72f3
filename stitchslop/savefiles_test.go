package stitchslop

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubdev/hub/adapters/adaptertest"
)

func dataURL(mime string, b []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b)
}

// Issue 28 item 4, out: every {name, dataUrl}, a top-level dataUrl and
// text are written under the app's names into the directory, and the
// reply says where instead of carrying their bytes.
func TestSaveFilesWritesTheReplysFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out") // made when missing
	env, _ := json.Marshal(map[string]any{
		"id": 3, "ok": true, "say": "Exported.", "big": json.Number("12345678901234567890"),
		"dataUrl": dataURL("image/png", pngBytes),
		"files": []any{
			map[string]any{"name": "hoop.dst", "dataUrl": dataURL("application/octet-stream", []byte{1, 2, 3})},
			map[string]any{"deeper": map[string]any{"name": "thumb.jpg", "dataUrl": dataURL("image/jpeg", jpegBytes)}},
		},
		"text": "<svg/>",
	})
	out, saved, notSaved, err := saveFiles(env, SaveOptions{Dir: dir, TextFile: "hoop.svg", Command: "design.export"})
	if err != nil || len(notSaved) != 0 || len(saved) != 4 {
		t.Fatalf("saved %+v, not saved %+v, err %v", saved, notSaved, err)
	}
	for name, want := range map[string][]byte{"design.export.png": pngBytes, "hoop.dst": {1, 2, 3}, "thumb.jpg": jpegBytes, "hoop.svg": []byte("<svg/>")} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s = %q %v", name, got, err)
		}
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().Perm()&0o022 != 0 {
			t.Errorf("%s is writable by others: %v", name, fi.Mode())
		}
	}
	s := string(out)
	if strings.Contains(s, "base64") || !strings.Contains(s, `"savedTo":"`+filepath.Join(dir, "hoop.dst")+`"`) ||
		!strings.Contains(s, `"textSavedTo":"`+filepath.Join(dir, "hoop.svg")+`"`) || !strings.Contains(s, `"big":12345678901234567890`) ||
		!strings.Contains(s, `"saved":[`) {
		t.Fatalf("reply after saving: %s", s)
	}
}

// What is written is refused by name or kind, never written over, and
// never through a link out of the directory.
func TestSaveFilesRefusals(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "victim.png")
	writeFile(t, outside, []byte("keep me"))
	if err := os.Symlink(outside, filepath.Join(dir, "link.png")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "exists.dst"), []byte("old"))
	png := dataURL("image/png", pngBytes)
	cases := []struct {
		name      string
		file      map[string]any
		overwrite bool
		why       string // "" when written
	}{
		{"a path", map[string]any{"name": "../escape.png", "dataUrl": png}, false, "a base name only"},
		{"a backslash", map[string]any{"name": `sub\x.png`, "dataUrl": png}, false, "a base name only"},
		{"dot dot", map[string]any{"name": "..", "dataUrl": png}, false, "a base name only"},
		{"hidden", map[string]any{"name": ".bashrc.dst", "dataUrl": png}, false, "hidden"},
		{"a kind the app does not produce", map[string]any{"name": "run.sh", "dataUrl": png}, false, "not a kind"},
		{"bytes not of the name's kind", map[string]any{"name": "x.jpg", "dataUrl": png}, false, "are not jpeg"},
		{"not a data URL", map[string]any{"name": "x.png", "dataUrl": "data:nope"}, false, "not data:"},
		{"an existing file", map[string]any{"name": "exists.dst", "dataUrl": png}, false, "exists"},
		{"a link out of the directory", map[string]any{"name": "link.png", "dataUrl": png}, false, "exists"},
		{"a link out of the directory, overwrite", map[string]any{"name": "link.png", "dataUrl": png}, true, "not a regular file"},
		{"an existing file, overwrite", map[string]any{"name": "exists.dst", "dataUrl": png}, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, _ := json.Marshal(map[string]any{"ok": true, "files": []any{tc.file}})
			out, saved, notSaved, err := saveFiles(env, SaveOptions{Dir: dir, Overwrite: tc.overwrite})
			if err != nil {
				t.Fatal(err)
			}
			if tc.why == "" {
				if len(saved) != 1 || len(notSaved) != 0 {
					t.Fatalf("saved %+v, not saved %+v", saved, notSaved)
				}
				return
			}
			if len(saved) != 0 || len(notSaved) != 1 || !strings.Contains(notSaved[0].Reason, tc.why) {
				t.Fatalf("saved %+v, not saved %+v; want refused saying %q", saved, notSaved, tc.why)
			}
			if !strings.Contains(string(out), `"notSaved":[`) {
				t.Fatalf("reply %s", out)
			}
		})
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep me" {
		t.Fatalf("a file outside the directory was written: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "exists.dst")); !bytes.Equal(b, pngBytes) {
		t.Fatalf("overwrite did not replace: %q", b)
	}
	if _, _, _, err := saveFiles([]byte(`{"ok":true,"say":"no files"}`), SaveOptions{Dir: dir}); err != errNoFiles {
		t.Fatalf("a reply with no file: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// Bulk left in a reply is replaced by a note (data URLs over 2 KB,
// strings over 100,000 characters); anything smaller stays.
func TestLeaveOutBulk(t *testing.T) {
	bigPNG := dataURL("image/png", append(append([]byte{}, pngBytes...), make([]byte, 4<<10)...))
	env, _ := json.Marshal(map[string]any{"ok": true, "small": dataURL("image/png", pngBytes),
		"files": []any{map[string]any{"name": "a.png", "dataUrl": bigPNG}}, "log": strings.Repeat("x", bulkText+1), "n": 5})
	out := string(leaveOutBulk(env, bulkHowShell))
	if strings.Contains(out, bigPNG) || strings.Contains(out, strings.Repeat("x", 1000)) {
		t.Fatalf("bulk kept: %.300s", out)
	}
	for _, want := range []string{"[left out: image/png, 4.0 KiB as a data URL; save it with --save DIR", "[left out: 100001 characters of text;", dataURL("image/png", pngBytes), `"n":5`} {
		if !strings.Contains(out, want) {
			t.Fatalf("%q missing from %.500s", want, out)
		}
	}
}

// call_with_file reads the file here and the tab gets it in its
// arguments; a refused file sends nothing at all.
func TestMCPCallWithFile(t *testing.T) {
	dir := t.TempDir()
	png := writeFile(t, filepath.Join(dir, "hoop.png"), pngBytes)
	dst := writeFile(t, filepath.Join(dir, "more.dst"), []byte{9, 9})
	b := startBridge(t, nil)
	c := connectSDK(t, b)
	p, _ := b.attach(map[string]any{"token": testToken})
	got := make(chan map[string]any, 4)
	p.serve(func(cmd string, args map[string]any) map[string]any {
		got <- args
		return map[string]any{"ok": true, "say": "Imported."}
	})
	res, text := callText(t, c, "call_with_file", map[string]any{"command": "design.import", "args": map[string]any{"scale": 2},
		"path": png, "fileArg": "design.image", "nameArg": "design.name", "files": []any{map[string]any{"path": dst, "fileArg": "extra"}}})
	if res.IsError || !strings.HasPrefix(text, "Imported.") {
		t.Fatalf("call_with_file = %q", text)
	}
	args := <-got
	design, _ := args["design"].(map[string]any)
	if args["scale"] != float64(2) || design["image"] != dataURL("image/png", pngBytes) || design["name"] != "hoop.png" ||
		args["extra"] != dataURL("application/octet-stream", []byte{9, 9}) {
		t.Fatalf("the tab got %v", args)
	}
	res, text = callText(t, c, "call_with_file", map[string]any{"command": "design.import", "path": png, "fileArg": "image",
		"files": []any{map[string]any{"path": filepath.Join(dir, "notes.txt"), "fileArg": "x"}}})
	if !res.IsError || !strings.Contains(text, "Nothing was sent") {
		t.Fatalf("a refused file: %q", text)
	}
	for _, bad := range []map[string]any{{"command": "wait_for_connection", "path": png, "fileArg": "f"}, {"command": "x", "path": png, "fileArg": "f", "args": []int{1}}} {
		if res, text := callText(t, c, "call_with_file", bad); !res.IsError || !strings.Contains(text, "Nothing was sent") {
			t.Fatalf("%v: %q", bad, text)
		}
	}
	select {
	case a := <-got:
		t.Fatalf("the tab got a call after a refusal: %v", a)
	default:
	}
}

// call_to_files writes what the answer carries and returns the answer
// without the bytes, saying where they went.
func TestMCPCallToFiles(t *testing.T) {
	dir := t.TempDir()
	b := startBridge(t, nil)
	c := connectSDK(t, b)
	p, _ := b.attach(map[string]any{"token": testToken})
	p.serve(func(cmd string, args map[string]any) map[string]any {
		return map[string]any{"ok": true, "say": "Exported.", "dataUrl": dataURL("image/png", pngBytes),
			"files": []any{map[string]any{"name": "hoop.pes", "dataUrl": dataURL("application/octet-stream", []byte("PES"))}}}
	})
	res, text := callText(t, c, "call_to_files", map[string]any{"command": "design.export", "dir": dir, "fileName": "preview.png"})
	if res.IsError || !strings.HasPrefix(text, "Saved 2 file(s):") || strings.Contains(text, "base64") || len(res.Content) != 1 {
		t.Fatalf("call_to_files = %v %q (%d blocks)", res.IsError, text, len(res.Content))
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "hoop.pes")); string(b) != "PES" {
		t.Fatalf("hoop.pes = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "preview.png")); !bytes.Equal(b, pngBytes) {
		t.Fatalf("preview.png = %q", b)
	}
	// Again: both exist, and nothing is written over them.
	res, text = callText(t, c, "call_to_files", map[string]any{"command": "design.export", "dir": dir, "fileName": "preview.png"})
	if !res.IsError || !strings.Contains(text, "Not saved: preview.png: a file of that name exists") {
		t.Fatalf("call_to_files again = %v %q", res.IsError, text)
	}
}

// A nested data URL over 2 KB in a page tool's answer reaches the model as
// a note, not as base64; a top-level image is still an image block.
func TestMCPBulkLeftOut(t *testing.T) {
	b := startBridge(t, nil)
	c := connectSDK(t, b)
	p, _ := b.attach(map[string]any{"token": testToken})
	big := dataURL("application/octet-stream", make([]byte, 3<<10))
	p.serve(func(string, map[string]any) map[string]any {
		return map[string]any{"ok": true, "dataUrl": dataURL("image/png", pngBytes), "files": []any{map[string]any{"name": "a.dst", "dataUrl": big}}}
	})
	p.send(map[string]any{"tools": []any{map[string]any{"name": "design.export"}}})
	adaptertest.WaitFor(t, "the tool", func() bool { return strings.Contains(strings.Join(toolNames(t, c), ","), "design.export") })
	res, text := callText(t, c, "design.export", map[string]any{})
	if strings.Contains(text, big) || !strings.Contains(text, "[left out: application/octet-stream, 3.0 KiB as a data URL; save it with call_to_files") || len(res.Content) != 2 {
		t.Fatalf("answer %q (%d blocks)", text, len(res.Content))
	}
}

// The shell's call: --file / --file-text put files in by path, --save
// writes the answer's files, and bulk is left out of what is printed
// unless --raw; exit codes as §4.4 says.
func TestShellCallFiles(t *testing.T) {
	dir := t.TempDir()
	png := writeFile(t, filepath.Join(dir, "hoop.png"), pngBytes)
	svg := writeFile(t, filepath.Join(dir, "logo.svg"), []byte("<svg/>"))
	b := startBridge(t, nil)
	p, _ := b.attach(map[string]any{"token": testToken})
	big := dataURL("application/octet-stream", make([]byte, 3<<10))
	p.serve(func(cmd string, args map[string]any) map[string]any {
		switch cmd {
		case "export":
			return map[string]any{"ok": true, "files": []any{map[string]any{"name": "hoop.dst", "dataUrl": big}}, "text": "<svg/>"}
		}
		return map[string]any{"ok": true, "args": args}
	})
	run := func(argv ...string) (string, string, int) {
		t.Helper()
		ca, err := parseClientArgs(argv, true)
		if err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		sc := &shellClient{ConfigDir: b.configDir(), Stdout: &stdout, Stderr: &stderr}
		args := json.RawMessage(`{}`)
		if len(ca.pos) == 2 {
			args = json.RawMessage(ca.pos[1])
		}
		code := exitCode(sc.call(ca, ca.pos[0], args))
		return stdout.String(), stderr.String(), code
	}
	out, _, code := run("import", `{"keep":true}`, "--file", "design.image="+png, "--file-text", "svg="+svg)
	if code != 0 || !strings.Contains(out, `"image":"`+dataURL("image/png", pngBytes)+`"`) || !strings.Contains(out, `"svg":"\u003csvg/\u003e"`) {
		t.Fatalf("call --file: %d %s", code, out)
	}
	out, _, code = run("import", "--file", "image="+filepath.Join(dir, ".hidden.png"))
	if code != 1 || out != "" {
		t.Fatalf("call --file of a hidden file: %d %q", code, out)
	}
	out, _, code = run("export")
	if code != 0 || strings.Contains(out, big) || !strings.Contains(out, "[left out: application/octet-stream, 3.0 KiB as a data URL; save it with --save DIR (or print it with --raw)]") {
		t.Fatalf("call with bulk: %d %.300s", code, out)
	}
	if out, _, _ = run("export", "--raw"); !strings.Contains(out, big) {
		t.Fatal("--raw left the bulk out")
	}
	save := filepath.Join(dir, "out")
	out, errText, code := run("export", "--save", save, "--text-file", "logo.svg")
	if code != 0 || !strings.Contains(out, `"savedTo":"`+filepath.Join(save, "hoop.dst")+`"`) || !strings.Contains(errText, "saved 3072 bytes to") {
		t.Fatalf("call --save: %d %s %s", code, out, errText)
	}
	if got, _ := os.ReadFile(filepath.Join(save, "logo.svg")); string(got) != "<svg/>" {
		t.Fatalf("logo.svg = %q", got)
	}
	out, errText, code = run("export", "--save", save, "--text-file", "logo.svg")
	if code != 1 || !strings.Contains(out, `"notSaved"`) || !strings.Contains(errText, "not saved: hoop.dst") {
		t.Fatalf("call --save again: %d %s %s", code, out, errText)
	}
	if _, _, code = run("export", "--save", save, "--text-file", "logo.svg", "--overwrite"); code != 0 {
		t.Fatalf("call --save --overwrite: %d", code)
	}
	_, errText, code = run("import", "--save", save)
	if code != 0 || !strings.Contains(errText, "carries no file") {
		t.Fatalf("call --save with no file in the answer: %d %s", code, errText)
	}
	for _, bad := range [][]string{{"x", "--out", "a.png", "--save", save}, {"x", "--overwrite"}} {
		if _, _, code := run(bad...); code != 64 {
			t.Fatalf("%v: exit %d, want 64", bad, code)
		}
	}
	if _, err := parseClientArgs([]string{"--save", "d"}, false); err == nil {
		t.Fatal("--save accepted outside call")
	}
	if _, err := parseClientArgs([]string{"x", "--file", "noequals"}, true); err == nil {
		t.Fatal("--file without KEY= accepted")
	}
}

// exitCode is the exit code err carries (0 for nil).
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return -1
}
