package terminal

import "strings"

// dialect is the syntax of the shell that runs the commands, which the
// guard rail reads them in: sh's (Catastrophic) or cmd.exe's
// (CatastrophicCmd). It follows the configured shell, so the choice per OS
// is the choice of Config.Shell's default (defaultShell) and the Linux
// tests can judge cmd.exe commands through a Manager too.
type dialect int

const (
	dialectSh dialect = iota
	dialectCmd
)

// dialectOf is the dialect of a shell path: cmd for cmd or cmd.exe in any
// case and with either separator, sh for anything else.
func dialectOf(shell string) dialect {
	name := shell[strings.LastIndexAny(shell, `\/`)+1:]
	if strings.EqualFold(name, "cmd.exe") || strings.EqualFold(name, "cmd") {
		return dialectCmd
	}
	return dialectSh
}

// catastrophic judges command, starting in dir ("" when unknown), by the
// dialect's rules.
func (d dialect) catastrophic(command, dir string) (Refusal, bool) {
	if d == dialectCmd {
		return CatastrophicCmd(command, dir)
	}
	return CatastrophicIn(command, dir)
}
