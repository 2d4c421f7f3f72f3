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
