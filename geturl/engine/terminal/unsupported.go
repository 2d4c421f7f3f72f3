package terminal

// UnsupportedError says the terminal cannot run commands on this OS
// (Supported): the tool answers it as spawn_failed, not retryable, and
// hub status shows it.
type UnsupportedError struct {
	GOOS string
}

func (e *UnsupportedError) Error() string {
	return "the terminal is not available on " + e.GOOS +
		" in this build: it needs Linux's child subreaper to end every process a command starts"
}
