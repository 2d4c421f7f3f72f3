//go:build !linux

package opencode

// procStart has no process start time to read here yet, so no process
// pin is made (the pin is "none").
func procStart(int) (string, error) { return "", errNoOwner }
