// Package configs embeds the hub's default configuration, used when no
// config file is given, and ships example.yaml, which documents every key.
package configs

import _ "embed"

// Default is default.yaml: what `hub run` uses without a config file.
//
//go:embed default.yaml
var Default []byte

// Example is example.yaml: every key, with comments.
//
//go:embed example.yaml
var Example []byte
