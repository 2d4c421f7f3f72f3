//go:build !windows

package autostart

import "errors"

// openRunKey has no registry to open outside Windows.
func openRunKey(string) (Store, error) {
	return nil, errors.New("autostart: the Run registry key exists only on Windows")
}
