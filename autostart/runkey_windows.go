package autostart

import (
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/windows/registry"
)

// runKey is the value name under a key of HKEY_CURRENT_USER (RunKeyPath;
// another in tests): the one registry call site, so the rest of the
// package is portable.
type runKey struct{ path, name string }

func openRunKey(name string) (Store, error) { return runKey{path: RunKeyPath, name: name}, nil }

func (r runKey) Where() string { return `HKCU\` + r.path + `\` + r.name }

// notExist maps the registry's "not found" to fs.ErrNotExist.
func notExist(err error) error {
	if errors.Is(err, registry.ErrNotExist) {
		return fs.ErrNotExist
	}
	return err
}

func (r runKey) Read() ([]byte, error) {
	k, err := registry.OpenKey(registry.CURRENT_USER, r.path, registry.QUERY_VALUE)
	if err != nil {
		return nil, notExist(err)
	}
	defer k.Close()
	s, _, err := k.GetStringValue(r.name)
	if errors.Is(err, registry.ErrUnexpectedType) {
		return nil, fmt.Errorf("not a string value: not an entry hub wrote")
	}
	if err != nil {
		return nil, notExist(err)
	}
	if len(s) > maxEntry {
		return nil, fmt.Errorf("larger than %d bytes: not an entry hub wrote", maxEntry)
	}
	return []byte(s), nil
}

// Write sets the value as REG_SZ: Windows expands %VARIABLES% only in
// REG_EXPAND_SZ, so a % in a path stays a %.
func (r runKey) Write(data []byte) error {
	k, _, err := registry.CreateKey(registry.CURRENT_USER, r.path, registry.SET_VALUE)
	if err != nil {
		return err
	}
	defer k.Close()
	return k.SetStringValue(r.name, string(data))
}

func (r runKey) Remove() error {
	k, err := registry.OpenKey(registry.CURRENT_USER, r.path, registry.SET_VALUE)
	if err != nil {
		return notExist(err)
	}
	defer k.Close()
	return notExist(k.DeleteValue(r.name))
}
