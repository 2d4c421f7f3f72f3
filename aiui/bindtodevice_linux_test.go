package aiui

import "syscall"

func bindToDevice(fd uintptr, dev string) error { return syscall.BindToDevice(int(fd), dev) }
