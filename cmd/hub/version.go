package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/internal/lazyre"
)

// Release builds set these at link time (.goreleaser.yaml):
//
//	-X main.version=1.2.3 -X main.commit=<full hash> -X main.date=<RFC 3339 build time>
//
// Each one left empty is taken from the build information the Go
// toolchain records in the binary (see describeBuild).
var (
	version string
	commit  string
	date    string
)

// build describes this binary: what `hub version` and `hub --version` print.
type build struct {
	Version  string // "v1.2.3" (go install …@v1.2.3), "1.2.3" (a release archive), a pseudo-version, or "dev"
	Commit   string // the VCS revision, "" when unknown
	Modified bool   // built from a tree with uncommitted changes
	Date     string // RFC 3339, "" when unknown
	// Committed marks Date as the commit's time (from the VCS or a
	// pseudo-version), not the build's (from ldflags).
	Committed bool
	Go        string // runtime.Version()
	Platform  string // GOOS/GOARCH
}

// linked are the values set with -ldflags -X.
type linked struct{ version, commit, date string }

// pseudoVersion matches the tail of a Go pseudo-version
// (v0.0.0-20260102030405-0123456789ab, v1.2.4-0.2026…, v1.2.3-pre.0.2026…,
// each maybe with +dirty): `go install …@latest` of an untagged commit, or
// `go build` in a checkout since Go 1.24.
var pseudoVersion = lazyre.New(`[-.](\d{14})-([0-9a-f]{12})(\+[0-9A-Za-z.-]+)?$`)

// describeBuild resolves each field from the linker's values when set,
// else from the build info: the main module's version (set by `go install
// …@version`, or by `go build` from the checkout's VCS state), its VCS
// revision and commit time (vcs.revision, vcs.time, vcs.modified), or the
// revision and time a pseudo-version encodes.
func describeBuild(l linked, bi *debug.BuildInfo) build {
	b := build{Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil && bi.GoVersion != "" {
		b.Go = bi.GoVersion
	}
	var vcs map[string]string
	if bi != nil {
		vcs = make(map[string]string, len(bi.Settings))
		for _, s := range bi.Settings {
			vcs[s.Key] = s.Value
		}
	}

	b.Version = l.version
	if b.Version == "" && bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		b.Version = bi.Main.Version
	}
	if b.Version == "" {
		b.Version = "dev"
	}

	switch {
	case l.commit != "":
		b.Commit = l.commit
	case vcs["vcs.revision"] != "":
		b.Commit = vcs["vcs.revision"]
		b.Modified = vcs["vcs.modified"] == "true"
	}
	switch {
	case l.date != "":
		b.Date = l.date
	case vcs["vcs.time"] != "":
		b.Date, b.Committed = vcs["vcs.time"], true
	}

	// A module installed from the proxy carries no VCS settings; its
	// pseudo-version still names the commit and its time.
	if m := pseudoVersion().FindStringSubmatch(b.Version); m != nil && l.version == "" {
		if b.Commit == "" {
			b.Commit = m[2]
		}
		if b.Date == "" {
			if t, err := time.Parse("20060102150405", m[1]); err == nil {
				b.Date, b.Committed = t.UTC().Format(time.RFC3339), true
			}
		}
	}
	return b
}

// String is the version line after "hub version ":
//
//	1.2.3 (commit 0123…, built 2026-01-02T03:04:05Z, go1.26.8 linux/amd64)
//
// Every field is always there, "unknown" when the binary does not say.
func (b build) String() string {
	c := b.Commit
	if c == "" {
		c = "unknown"
	} else if b.Modified {
		c += "-dirty"
	}
	d := "built unknown"
	switch {
	case b.Date != "" && b.Committed:
		d = "committed " + b.Date
	case b.Date != "":
		d = "built " + b.Date
	}
	return fmt.Sprintf("%s (commit %s, %s, %s %s)", b.Version, c, d, b.Go, b.Platform)
}

// thisBuild describes the running binary.
func thisBuild() build {
	bi, _ := debug.ReadBuildInfo()
	return describeBuild(linked{version, commit, date}, bi)
}

// versionString is the bare version the hub records in its state file and
// reports to MCP clients.
func versionString() string { return thisBuild().Version }

// versionCommand prints the line `hub --version` prints (urfave/cli's
// version flag, from App.Version).
func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version, commit, build date, Go version and platform",
		Action: func(c *cli.Context) error {
			cli.ShowVersion(c)
			return nil
		},
	}
}
