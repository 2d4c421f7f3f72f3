package stitchslop

import "time"

// ProtocolVersion is the bridge protocol number sent in hello and written to
// the session file.
const ProtocolVersion = 1

// ServerName is the name in hello and in the MCP serverInfo.
const ServerName = "stitchslop-connector"

// Version is this bridge implementation's version (MCP serverInfo.version).
const Version = "1.0.0"

// Limits and default timings. Every one exists because a page or an agent
// can otherwise hold the bridge hostage.
const (
	// MaxFirstFrame bounds the handshake frame (pre-auth).
	MaxFirstFrame = 4 << 10
	// DefaultMaxFrame bounds every frame after authentication; renders are
	// big (base64 PNGs), so it is generous.
	DefaultMaxFrame = 32 << 20
	// DefaultAuthTimeout is how long a socket may stay unauthenticated.
	DefaultAuthTimeout = 10 * time.Second
	// DefaultCallTimeout is how long a page gets to answer one command.
	DefaultCallTimeout = 60 * time.Second
	// DefaultProbeTimeout is how long an incumbent page gets to answer a
	// ping before a second page may take over from it (§2.6).
	DefaultProbeTimeout = 2 * time.Second
	// DefaultWaitSeconds and MaxWaitSeconds bound wait_for_connection (§3.4).
	DefaultWaitSeconds = 90
	MaxWaitSeconds     = 120
	// MaxControlWaitSeconds caps POST /wait (the spec leaves it open).
	MaxControlWaitSeconds = 600
	// maxControlBody bounds a control-plane request body.
	maxControlBody = 8 << 20
)

// Options configure one bridge. The zero value of every timing means its
// default; tests set them small.
type Options struct {
	// Origin is the only site allowed to connect.
	Origin string
	// Ports are scanned in order (default 8787..8790); [0] asks the OS.
	Ports []int
	// ConfigDir holds pairing.json and session files; "~/" is expanded
	// against env.Dirs.Home. Default DefaultConfigDir.
	ConfigDir string
	// Token is a one-time bootstrap token armed at start (STITCHSLOP_TOKEN).
	Token string
	// FollowOutside makes Serve follow a live bridge started outside this
	// process that already serves the origin from ConfigDir, instead of
	// binding a second one (see followOutside). The hub's adapter sets it;
	// a standalone bridge decides that before it is built (follower).
	FollowOutside bool

	AuthTimeout  time.Duration
	CallTimeout  time.Duration
	ProbeTimeout time.Duration
	MaxFrame     int
}

func (o *Options) defaults() {
	if len(o.Ports) == 0 {
		o.Ports = append([]int(nil), DefaultPorts...)
	}
	if o.ConfigDir == "" {
		o.ConfigDir = DefaultConfigDir
	}
	if o.AuthTimeout <= 0 {
		o.AuthTimeout = DefaultAuthTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = DefaultProbeTimeout
	}
	if o.MaxFrame <= 0 {
		o.MaxFrame = DefaultMaxFrame
	}
}
