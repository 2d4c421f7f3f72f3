package main

import (
	"errors"
	"testing"
)

func TestFlagError(t *testing.T) {
	for in, want := range map[string]string{
		"flag provided but not defined: -jsn":           "unknown flag --jsn",
		"flag provided but not defined: -x":             "unknown flag -x",
		`invalid value "abc" for flag -n: parse error`:  `invalid value "abc" for -n`,
		`invalid value "x" for flag -port: parse error`: `invalid value "x" for --port`,
		"flag needs an argument: -config":               "--config needs a value",
		"something else entirely":                       "something else entirely",
	} {
		if got := flagError(errors.New(in)); got != want {
			t.Errorf("flagError(%q) = %q, want %q", in, got, want)
		}
	}
}
