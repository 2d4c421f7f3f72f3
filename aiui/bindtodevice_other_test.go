//go:build !linux

package aiui

import "errors"

func bindToDevice(uintptr, string) error { return errors.New("no SO_BINDTODEVICE here") }
