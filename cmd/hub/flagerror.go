package main

import (
	"strings"

	"github.com/hubdev/hub/internal/lazyre"
)

// The flag package names every flag with one dash and calls any bad value
// a "parse error"; people type --json, so say it their way.
var (
	undefinedFlag = lazyre.New(`^flag provided but not defined: -(\S+)$`)
	badFlagValue  = lazyre.New(`^invalid value (".*") for flag -(\S+): parse error$`)
	flagNeedsArg  = lazyre.New(`^flag needs an argument: -(\S+)$`)
)

// flagError rewrites urfave/cli's flag errors as "unknown flag --jsn",
// "invalid value "abc" for --lines" and "--port needs a value".
func flagError(err error) string {
	msg := err.Error()
	if m := undefinedFlag().FindStringSubmatch(msg); m != nil {
		return "unknown flag " + dashes(m[1])
	}
	if m := badFlagValue().FindStringSubmatch(msg); m != nil {
		return "invalid value " + m[1] + " for " + dashes(m[2])
	}
	if m := flagNeedsArg().FindStringSubmatch(msg); m != nil {
		return dashes(m[1]) + " needs a value"
	}
	return msg
}

// dashes spells a flag name as it is typed: -n, --json.
func dashes(name string) string {
	name = strings.TrimLeft(name, "-")
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}
