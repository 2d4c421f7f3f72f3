// Package terminal is the engine behind /x: it runs an agent's shell
// command in a project, in the foreground with bounded time and output, or
// as a startup-verified background launch (bg=1). It is a typed Go API; it
// knows nothing of HTTP, URLs or the intent journal, which calls it at most
// once per intent.
//
// # A real host shell, not a sandbox
//
// Commands run as the hub's user through the host's /bin/sh -c (dash on
// Debian and Ubuntu; cmd.exe on Windows, see below), starting in a directory inside the project. A
// command can still name any path the hub's user can reach: containment
// is the business of the file tools, not of this one. What this package
// adds are guard rails against accidents — the refusal of obvious
// machine-level catastrophes (Catastrophic), the stripping of
// secret-looking environment variables (childenv.IsSecret), bounded time and
// output — none of which stops a deliberately constructed command.
// The hub's own environment stays out of reach even of such a command
// (not the user's other processes'): a command's parent is its reaper, started
// with the stripped environment, and the reaper's parent is the hub, which
// the binary makes undumpable at startup (hub.MakeUndumpable, on Linux),
// so /proc shows a command neither the hub's environment nor its memory.
//
// # Use
//
// A Manager per hub owns the machine-wide foreground gate (2 slots, the
// spec's TerminalConcurrencyGate) and every background process; a Runner
// per session runs commands in that session's sandbox.Scope:
//
//	m := terminal.NewManager(terminal.Config{})
//	defer m.Shutdown(ctx)
//	r := m.Runner(scope)
//	job, err := r.Start(ctx, terminal.Request{Command: "go test ./...", Cwd: "src"})
//	// err: a *Error refusal (nothing ran). Otherwise the first answer:
//	res, finished, err := job.Await(wait) // else poll job.Done() later
//
// Start validates synchronously (empty or over-long command, catastrophe,
// cwd outside the project or not a directory, timeout out of range), then
// the job queues for the gate (Job.State: queued, running, done — the
// journal's pending, running, succeeded/failed), runs until exit or its
// timeout (default 120 s) kills its process tree, and yields a Result:
// exit code or signal, timedOut, durationMs, and the interleaved stdout and
// stderr, at most 64 KiB of it (head and tail around an omission marker;
// a byte that is not UTF-8 is shown as a 3-byte U+FFFD).
//
// Launch starts a background command detached from the request and
// watches its startup for up to 5 s (less when it exits, or once a URL or
// port has appeared and output settled). The Launched result says whether
// it is still running, its pid, the startup transcript, detectedUrls and
// detectedPorts (DetectURLs); a launch that died is Failed, with Err and
// the foreground form of the command as Repair.
//
// # Processes
//
// Each command's shell runs under a reaper (package reaper), a child
// subreaper in a new session, and leads its own process group, with stdin
// /dev/null and no controlling terminal. Timeouts, Job.Cancel, Runner.Stop
// and Manager.Shutdown end the command's whole tree (SIGTERM, SIGCONT, then
// SIGKILL after a grace period), including processes that left the group
// (setsid, a daemon's double fork), and nothing else. When a shell exits on
// its own, whatever it left in its session is ended too, so a foreground
// command leaves no jobs running (use bg=1 for that) and a background
// process's children go with it; what deliberately left the session
// (setsid) is released. The shell is left unreaped until then, so its
// group id cannot have been recycled for someone else's processes. A
// reaper that stops answering or dies is no way out: the hub then ends
// the tree and the session itself (see process.go's forceEnd).
//
// # Windows
//
// The shell is cmd.exe from the system directory, run as
// `cmd.exe /d /v:off /s /c "COMMAND"` (cmdLine: no AutoRun, no delayed
// expansion, the command between the quotes /s removes, set verbatim as
// the command line). There is no reaper process: each command's shell is
// started suspended (CREATE_SUSPENDED, CREATE_NEW_PROCESS_GROUP,
// CREATE_NO_WINDOW), put in a Job Object of its own limited with
// KILL_ON_JOB_CLOSE whose only handle the hub holds, and resumed, so
// everything it starts is in the job and cannot leave it. superviseJob
// speaks the reaper's protocol in the hub's process over that job, so the
// lifecycle above is the same code. Differences: there is no SIGTERM
// (a timeout or a stop terminates the job at once); nothing is released
// (whatever a foreground command leaves ends with it); the hub's death
// closes the handle, which ends the job. The guard reads cmd's grammar
// (CatastrophicCmd); environment names and the project's path in output
// ignore case.
//
// What runs where: the cmd.exe guard, the spawn plan (cmdLine), the
// Windows environment and output rules and the supervisor's lifecycle
// over a fake job are portable and tested on Linux. process_windows.go
// (the Job Object calls, the suspended start, the resume) is compiled and
// vetted for windows here and has never run on Windows.
//
// Background processes belong to the Manager: Manager.Shutdown (adapter
// shutdown) kills them all and waits for them. If the hub dies without a
// shutdown, each reaper sees its command pipe close and kills its tree.
//
// # Output
//
// Output is read continuously (a background process never blocks on a
// full pipe), terminal escape sequences and stray control bytes are
// removed, every occurrence of the project's host path becomes /project,
// and the text handed back is valid UTF-8. Results give cwd as the virtual
// /project/... path and errors never name a host path; what a command
// prints about the rest of the machine ($HOME, /usr/bin/go) is its own
// business and passes through.
package terminal
