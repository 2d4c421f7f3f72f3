package terminal

// UnsupportedError says the terminal cannot run commands on this OS
// (Supported): the tool answers it as spawn_failed, not retryable, and
// hub status shows it.
type UnsupportedError struct {
	GOOS string
}

func (e *UnsupportedError) Error() string {
	return "the terminal is not available on " + e.GOOS +
		" in this build: it runs only where it can end every process a command starts (Linux, macOS, Windows)"
}
