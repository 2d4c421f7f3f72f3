//go:build !linux

package opencode

import "errors"

var errNoOwner = errors.New("listener owners are only visible on linux")

func procListenerOwner(string, int) (int, string, error) { return 0, "", errNoOwner }
