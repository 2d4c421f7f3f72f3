// Package terminal is the engine behind /x: it runs an agent's shell
// command in a project, in the foreground with bounded time and output, or
// as a startup-verified background launch.
//
// It is a real host shell, not a sandbox. Commands run as the hub's user
// through /bin/sh -c, starting in a directory inside the project; a command
// can name any path the hub's user can reach. The guard rail against
// obvious machine-level catastrophes (Catastrophic) and the stripping of
// secret-looking environment variables (IsSecret) reduce accidents; they do
// not contain a determined command.
package terminal
