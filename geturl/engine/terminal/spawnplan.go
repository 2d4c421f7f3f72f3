package terminal

import "strings"

// cmdMaxCommand is the longest command the terminal hands cmd.exe: cmd
// reads at most 8191 characters of a command line, and the plan adds the
// two quotes around it. Counted in bytes, which are never fewer than the
// UTF-16 units cmd counts.
const cmdMaxCommand = 8191 - 2

// cmdLine is the Windows command line that runs command under cmd.exe:
//
//	"SHELL" /d /v:off /s /c "COMMAND"
//
// /d skips the registry's AutoRun commands, /v:off keeps delayed
// expansion (!VAR!) off whatever the registry says, so the guard's reading
// of the line is cmd's; with /s, cmd removes the first and the last quote
// after /c and runs what is between exactly as written, so the command
// needs no escaping at all. Go's argv quoting (the C runtime's rules,
// backslashes before quotes doubled) is wrong for cmd, which does not use
// them: the line goes in SysProcAttr.CmdLine as it is. The shell's path
// is quoted when it has a space (a path cannot hold a quote).
func cmdLine(shell, command string) string {
	if strings.ContainsAny(shell, " \t") {
		shell = `"` + shell + `"`
	}
	return shell + ` /d /v:off /s /c "` + command + `"`
}

// cmdLineRefusal says why a command cannot be given to cmd.exe as one
// line, or "" when it can: cmd /c runs only up to the first line break,
// so a script of several lines would silently lose all but the first.
func cmdLineRefusal(command string) string {
	if strings.ContainsAny(command, "\r\n") {
		return "cmd.exe runs one line: join the commands with & or &&, or write a .cmd file with /w and run it"
	}
	return ""
}
