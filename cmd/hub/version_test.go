package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

func settings(kv ...string) []debug.BuildSetting {
	var s []debug.BuildSetting
	for i := 0; i+1 < len(kv); i += 2 {
		s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
	}
	return s
}

// TestVersionDescribeBuild covers every way a hub binary is made: a
// release (ldflags), `go install …@v1.2.3` and `@latest` of an untagged
// commit (a module version, no VCS settings), `go build` in a checkout
// (VCS settings; since Go 1.24 a pseudo-version too), and a build that
// recorded nothing (-buildvcs=false, go test).
func TestVersionDescribeBuild(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	platform := runtime.GOOS + "/" + runtime.GOARCH
	cases := []struct {
		name string
		l    linked
		bi   *debug.BuildInfo
		want string
	}{
		{
			name: "release ldflags win over the build info",
			l:    linked{"1.2.3", rev, "2026-01-02T03:04:05Z"},
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
				Settings: settings("vcs.revision", "ffff", "vcs.time", "2020-01-01T00:00:00Z", "vcs.modified", "true")},
			want: "1.2.3 (commit " + rev + ", built 2026-01-02T03:04:05Z, go1.26.8 " + platform + ")",
		},
		{
			name: "go install @v1.2.3",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/hubdev/hub", Version: "v1.2.3"}},
			want: "v1.2.3 (commit unknown, built unknown, go1.26.8 " + platform + ")",
		},
		{
			name: "go install @latest of an untagged commit",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20260102030405-0123456789ab"}},
			want: "v0.0.0-20260102030405-0123456789ab (commit 0123456789ab, committed 2026-01-02T03:04:05Z, go1.26.8 " + platform + ")",
		},
		{
			name: "pseudo-version after a tag",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.4-0.20260102030405-0123456789ab"}},
			want: "v1.2.4-0.20260102030405-0123456789ab (commit 0123456789ab, committed 2026-01-02T03:04:05Z, go1.26.8 " + platform + ")",
		},
		{
			name: "go build in a dirty checkout",
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20260102030405-0123456789ab+dirty"},
				Settings: settings("vcs", "git", "vcs.revision", rev, "vcs.time", "2026-01-02T03:04:05Z", "vcs.modified", "true")},
			want: "v0.0.0-20260102030405-0123456789ab+dirty (commit " + rev + "-dirty, committed 2026-01-02T03:04:05Z, go1.26.8 " + platform + ")",
		},
		{
			name: "go build of a tagged, clean checkout",
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"},
				Settings: settings("vcs.revision", rev, "vcs.time", "2026-01-02T03:04:05Z", "vcs.modified", "false")},
			want: "v1.2.3 (commit " + rev + ", committed 2026-01-02T03:04:05Z, go1.26.8 " + platform + ")",
		},
		{
			name: "nothing recorded",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			want: "dev (commit unknown, built unknown, go1.26.8 " + platform + ")",
		},
		{
			name: "no build info at all",
			want: "dev (commit unknown, built unknown, " + runtime.Version() + " " + platform + ")",
		},
		{
			name: "only a version linked: commit and time from the VCS",
			l:    linked{version: "1.2.3"},
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20990101000000-aaaaaaaaaaaa"},
				Settings: settings("vcs.revision", rev, "vcs.time", "2026-01-02T03:04:05Z")},
			want: "1.2.3 (commit " + rev + ", committed 2026-01-02T03:04:05Z, go1.26.8 " + platform + ")",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := describeBuild(tc.l, tc.bi).String(); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestVersionLdflags builds hub with the ldflags .goreleaser.yaml gives
// (its templates filled in) and runs `hub version` and `hub --version`:
// the variables the release config sets are the ones the binary prints.
func TestVersionLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hub binary")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Builds []struct {
			Main    string   `yaml:"main"`
			Ldflags []string `yaml:"ldflags"`
			Flags   []string `yaml:"flags"`
		} `yaml:"builds"`
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Builds) != 1 || cfg.Builds[0].Main != "./cmd/hub" {
		t.Fatalf(".goreleaser.yaml: want one build of ./cmd/hub, got %+v", cfg.Builds)
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	fill := strings.NewReplacer("{{ .Version }}", "9.8.7", "{{ .FullCommit }}", rev, "{{ .Date }}", "2026-01-02T03:04:05Z")
	var ldflags []string
	for _, f := range cfg.Builds[0].Ldflags {
		f = fill.Replace(f)
		if strings.Contains(f, "{{") {
			t.Fatalf("ldflags template this test does not fill: %s", f)
		}
		ldflags = append(ldflags, f)
	}
	bin := filepath.Join(t.TempDir(), "hub")
	args := append([]string{"build"}, cfg.Builds[0].Flags...)
	args = append(args, "-ldflags", strings.Join(ldflags, " "), "-o", bin, ".")
	cmd := exec.Command(gobin, args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	want := "hub version 9.8.7 (commit " + rev + ", built 2026-01-02T03:04:05Z, " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
	for _, arg := range []string{"version", "--version"} {
		out, err := exec.Command(bin, arg).Output()
		if err != nil {
			t.Fatalf("hub %s: %v", arg, err)
		}
		if string(out) != want {
			t.Errorf("hub %s:\ngot  %swant %s", arg, out, want)
		}
	}
}
