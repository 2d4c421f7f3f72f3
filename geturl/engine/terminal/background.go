package terminal

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/hubdev/hub/geturl/fault"
)

// Launched is the outcome of a background launch's startup window.
type Launched struct {
	// Cwd is the virtual path the command started in.
	Cwd string `json:"cwd"`
	// Pid is the shell's pid, which is also its process group's id: the
	// handle for Runner.Stop (and for kill -- -PID from a later command).
	Pid int `json:"pid"`
	// Running: the process was still running when the window closed.
	Running bool `json:"running"`
	// Failed: it exited during the window with a non-zero status or by a
	// signal. Err then gives the structured failure and Repair the
	// foreground form of the command.
	Failed   bool   `json:"failed,omitempty"`
	ExitCode *int   `json:"exitCode,omitempty"`
	Signal   string `json:"signal,omitempty"`
	// StartupMs is how long the window lasted.
	StartupMs int64 `json:"startupMs"`
	// StartupTranscript is the output of the window (same treatment as a
	// foreground command's, bounded by MaxTranscript).
	StartupTranscript   string `json:"startupTranscript"`
	TranscriptBytes     int64  `json:"transcriptBytes"`
	TranscriptTruncated bool   `json:"transcriptTruncated"`
	// DetectedURLs and DetectedPorts come from the transcript (DetectURLs).
	DetectedURLs  []string `json:"detectedUrls"`
	DetectedPorts []int    `json:"detectedPorts"`
	// Repair is the foreground form of a failed launch, for the caller to
	// offer as the spec's repair URL (same command and cwd, without bg=1).
	Repair *Request `json:"-"`
}

// Err is the structured failure of a launch that died during startup, or
// nil. The caller decides whether the intent failed; the spec's repair URL
// is built from Repair.
func (l *Launched) Err() *Error {
	if !l.Failed {
		return nil
	}
	detail := "the background command exited during startup"
	if l.Signal != "" {
		detail += " (" + l.Signal + ")"
	} else if l.ExitCode != nil {
		detail += " with status " + strconv.Itoa(*l.ExitCode)
	}
	return &Error{Code: CodeBackgroundStartFailed, Detail: detail,
		Hint:      "read startupTranscript; run the foreground form (the repair URL) to see the whole failure",
		Retryable: true, Action: fault.ActionRunForeground, Repair: l.Repair}
}

// Process describes a tracked background process.
type Process struct {
	Pid       int       `json:"pid"`
	Command   string    `json:"command"`
	Cwd       string    `json:"cwd"`
	StartedAt time.Time `json:"startedAt"`
	// Output is its recent output: the startup transcript's head and the
	// latest tail, bounded by MaxTranscript.
	Output       string `json:"output"`
	OutputBytes  int64  `json:"outputBytes"`
	OmittedBytes int64  `json:"omittedBytes,omitempty"`
}

// background is a tracked background process.
type background struct {
	p      *proc
	runner *Runner
	req    Request
	cwd    string
}

// Launch starts req in the background, detached from the request: in its
// own session and process group, stdin /dev/null, not subject to the
// foreground gate or timeout. Validation happens now (a refused command
// runs nothing); so does the per-session and machine-wide count of
// background processes (background_limit_reached). The job then watches
// the startup for StartupWindow, ending early when the process exits or,
// once a URL or port has shown up, after StartupSettle of quiet, and
// finishes with a *Launched. Output keeps being read (and dropped beyond a
// bounded tail) after the window, so the process never blocks on a full
// pipe.
//
// ctx governs only the startup window (ending it kills the process); after
// that the process belongs to the Manager until it exits, Runner.Stop or
// Runner.Close stops it, or Manager.Shutdown kills it. When it exits on its
// own, whatever it left in its process group is killed with it.
func (r *Runner) Launch(ctx context.Context, req Request) (*Job[*Launched], error) {
	pr, perr := r.prepare(req)
	if perr != nil {
		return nil, perr
	}
	if err := r.reserve(); err != nil {
		return nil, err
	}
	m := r.m
	jctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(m.ctx, cancel)
	job := newJob[*Launched](m.cfg.Clock, cancel)
	if !m.track() {
		r.unreserve()
		unhook()
		cancel()
		return nil, errShuttingDown()
	}
	go func() {
		defer m.wg.Done()
		defer unhook()
		defer cancel()
		res, err := r.launch(jctx, pr, job)
		job.finish(res, err)
	}()
	return job, nil
}

// reserve counts a launch against the limits before it starts; the count
// is given back when the launch fails or the process is reaped.
func (r *Runner) reserve() *Error {
	m := r.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.bgCount >= m.cfg.MaxBackground || m.bgCount >= m.cfg.MaxBackgroundTotal {
		return &Error{Code: CodeBackgroundLimit,
			Detail: "at most " + strconv.Itoa(m.cfg.MaxBackground) + " background processes per session, " +
				strconv.Itoa(m.cfg.MaxBackgroundTotal) + " in all",
			Hint:      stopHint(m.cfg.Shell),
			Retryable: true, Action: fault.ActionRetryLater}
	}
	r.bgCount++
	m.bgCount++
	return nil
}

func (r *Runner) unreserve() {
	r.m.mu.Lock()
	r.bgCount--
	r.m.bgCount--
	r.m.mu.Unlock()
}

func (r *Runner) launch(ctx context.Context, pr prepared, job *Job[*Launched]) (*Launched, *Error) {
	m := r.m
	clock := m.cfg.Clock
	if ctx.Err() != nil { // shut down or canceled before it started
		r.unreserve()
		return nil, &Error{Code: CodeCanceled, Detail: "canceled before it started", Retryable: true,
			Action: fault.ActionRetryLater}
	}
	p, serr := r.spawn(pr, m.cfg.MaxTranscript)
	if serr != nil {
		r.unreserve()
		return nil, serr
	}
	job.markStarted()
	b := &background{p: p, runner: r, req: pr.req, cwd: pr.cwd}
	m.mu.Lock()
	m.bg[b] = struct{}{}
	r.bg[b] = struct{}{}
	m.wg.Add(1) // Shutdown waits for this job, so wg cannot be at zero here
	m.mu.Unlock()
	p.hold = true
	p.onDone = func() {
		m.mu.Lock()
		delete(m.bg, b)
		delete(r.bg, b)
		r.bgCount--
		m.bgCount--
		m.mu.Unlock()
	}
	go func() {
		defer m.wg.Done()
		p.supervise(nil)
	}()

	window := clock.After(m.cfg.StartupWindow)
	var settle <-chan time.Time
watch:
	for {
		select {
		case <-p.exited:
			p.settled()
			break watch
		case <-window:
			break watch
		case <-settle:
			break watch
		case <-p.activity:
			if urls, ports := DetectURLs(p.capture.snapshot().Text); len(urls)+len(ports) > 0 {
				settle = clock.After(m.cfg.StartupSettle)
			}
		case <-ctx.Done():
			p.stop()
			<-p.done
			return nil, &Error{Code: CodeCanceled, Detail: "canceled during the startup window; the process was stopped",
				Retryable: true, Action: fault.ActionRetryLater}
		}
	}
	running := true
	select {
	case <-p.exited:
		p.settled()
		running = false
	default:
	}
	out := p.capture.snapshot()
	urls, ports := DetectURLs(out.Text)
	res := &Launched{
		Cwd:                 pr.cwd,
		Pid:                 p.pid,
		Running:             running,
		StartupMs:           clock.Now().Sub(p.startedAt).Milliseconds(),
		StartupTranscript:   out.Text,
		TranscriptBytes:     out.Bytes,
		TranscriptTruncated: out.Truncated,
		DetectedURLs:        append([]string{}, urls...),
		DetectedPorts:       append([]int{}, ports...),
	}
	if !running {
		code, sig := p.exit()
		res.StartupMs = p.exitedAt.Sub(p.startedAt).Milliseconds()
		res.Signal = sig
		if sig == "" {
			res.ExitCode = &code
		}
		if code != 0 || sig != "" {
			res.Failed = true
			res.Repair = &Request{Command: pr.req.Command, Cwd: pr.cwd}
		}
	}
	return res, nil
}

// settled waits, once the shell has exited, until the process is gone or
// holds only what left its session (held until the session ends): not for
// done alone, which a held daemon keeps open.
func (p *proc) settled() {
	select {
	case <-p.done:
	case <-p.holding:
	}
}

// Background lists this session's background processes that are still
// tracked (running, or exited and not yet reaped), oldest first.
func (r *Runner) Background() []Process {
	r.m.mu.Lock()
	list := make([]*background, 0, len(r.bg))
	for b := range r.bg {
		list = append(list, b)
	}
	r.m.mu.Unlock()
	out := make([]Process, 0, len(list))
	for _, b := range list {
		o := b.p.capture.snapshot()
		out = append(out, Process{Pid: b.p.pid, Command: b.req.Command, Cwd: b.cwd, StartedAt: b.p.startedAt,
			Output: o.Text, OutputBytes: o.Bytes, OmittedBytes: o.Omitted})
	}
	slices.SortFunc(out, func(a, b Process) int { return a.StartedAt.Compare(b.StartedAt) })
	return out
}

// Stop ends one of this session's background processes by pid (its process
// group: SIGTERM, SIGKILL after KillGrace) and waits until it is reaped or
// ctx ends. A pid this Runner did not launch is unknown_process: it never
// signals anything else.
func (r *Runner) Stop(ctx context.Context, pid int) error {
	r.m.mu.Lock()
	var found *background
	for b := range r.bg {
		if b.p.pid == pid {
			found = b
		}
	}
	r.m.mu.Unlock()
	if found == nil {
		return &Error{Code: CodeUnknownProcess, Detail: "no background process " + strconv.Itoa(pid) + " in this session"}
	}
	found.p.stop()
	select {
	case <-found.p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops every background process of this session (for a session
// that is stopped or deleted) and waits for them as Stop does.
func (r *Runner) Close(ctx context.Context) error {
	r.m.mu.Lock()
	var list []*background
	for b := range r.bg {
		list = append(list, b)
	}
	r.m.mu.Unlock()
	for _, b := range list {
		b.p.stop()
	}
	for _, b := range list {
		select {
		case <-b.p.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// stopHint tells how a later command of the shell ends a background
// process: its process group under sh, its tree under cmd.exe.
func stopHint(shell string) string {
	if dialectOf(shell) == dialectCmd {
		return "stop one first: taskkill /t /f /pid PID ends a background process and its children"
	}
	return "stop one first: kill -- -PID ends a background process group"
}
