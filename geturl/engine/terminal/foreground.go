package terminal

import (
	"context"
	"errors"

	"github.com/hubdev/hub/geturl/fault"
)

// Result is the outcome of a foreground command.
type Result struct {
	// Cwd is the virtual path the command started in.
	Cwd string `json:"cwd"`
	// ExitCode is the shell's exit status, -1 when a signal ended it
	// (then Signal names it).
	ExitCode int    `json:"exitCode"`
	Signal   string `json:"signal,omitempty"`
	// TimedOut: the hard timeout (TimeoutMs) killed the process tree.
	TimedOut  bool  `json:"timedOut"`
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// Canceled: the caller or a shutdown stopped it.
	Canceled bool `json:"canceled,omitempty"`
	// DurationMs is from start to the shell's exit; QueuedMs the time
	// spent waiting for a foreground slot.
	DurationMs int64 `json:"durationMs"`
	QueuedMs   int64 `json:"queuedMs,omitempty"`
	// Output is stdout and stderr interleaved, escape sequences removed,
	// the project's host path shown as /project, at most MaxOutput bytes
	// (head and tail around an omission marker).
	Output          string `json:"output"`
	OutputBytes     int64  `json:"outputBytes"`
	OutputTruncated bool   `json:"outputTruncated"`
	OmittedBytes    int64  `json:"omittedBytes,omitempty"`
}

// Start runs req in the foreground. Validation happens now, so a refused
// command (empty, too long, catastrophic, bad cwd or timeout) returns a
// *Error and nothing runs. Otherwise the job waits for a slot of the
// machine-wide gate, runs the command until it exits or its timeout kills
// its process tree, and finishes with a *Result (or a *Error such as
// terminal_busy). It does not block: wait with Await (the bounded first
// answer), Wait or Done.
//
// ctx governs the job to its end: when it ends, a queued job leaves the
// queue and a running command is killed. Pass a context that outlives the
// HTTP request when the result is to be polled for later.
func (r *Runner) Start(ctx context.Context, req Request) (*Job[*Result], error) {
	pr, perr := r.prepare(req)
	if perr != nil {
		return nil, perr
	}
	m := r.m
	jctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(m.ctx, cancel)
	job := newJob[*Result](m.cfg.Clock, cancel)
	if !m.track() {
		unhook()
		cancel()
		return nil, errShuttingDown()
	}
	go func() {
		defer m.wg.Done()
		defer unhook()
		defer cancel()
		res, err := r.foreground(jctx, pr, job)
		job.finish(res, err)
	}()
	return job, nil
}

func (r *Runner) foreground(ctx context.Context, pr prepared, job *Job[*Result]) (*Result, *Error) {
	m := r.m
	clock := m.cfg.Clock
	queuedAt := clock.Now()
	release, err := m.gate.Acquire(ctx, m.cfg.GateWait)
	if err != nil {
		if errors.Is(err, ErrGateBusy) {
			return nil, &Error{Code: CodeBusy,
				Detail:    "terminal concurrency capped: the machine-wide foreground slots are in use",
				Hint:      "retry shortly, or launch long-running commands with bg=1",
				Retryable: true, Action: fault.ActionRetryLater}
		}
		return nil, &Error{Code: CodeCanceled, Detail: "canceled while waiting for a foreground slot", Retryable: true,
			Action: fault.ActionRetryLater}
	}
	defer release()
	if ctx.Err() != nil { // given a slot as it was canceled: do not start
		return nil, &Error{Code: CodeCanceled, Detail: "canceled before it started", Retryable: true,
			Action: fault.ActionRetryLater}
	}
	p, serr := r.spawn(pr, m.cfg.MaxOutput)
	if serr != nil {
		return nil, serr
	}
	job.markStarted()
	unhook := context.AfterFunc(ctx, p.stop)
	p.supervise(clock.After(pr.timeout))
	unhook()

	code, sig := p.exit()
	out := p.capture.snapshot()
	res := &Result{
		Cwd:             pr.cwd,
		ExitCode:        code,
		Signal:          sig,
		TimedOut:        p.timedOut,
		Canceled:        p.stopped,
		DurationMs:      p.exitedAt.Sub(p.startedAt).Milliseconds(),
		QueuedMs:        p.startedAt.Sub(queuedAt).Milliseconds(),
		Output:          out.Text,
		OutputBytes:     out.Bytes,
		OutputTruncated: out.Truncated,
		OmittedBytes:    out.Omitted,
	}
	if p.timedOut {
		res.TimeoutMs = pr.timeout.Milliseconds()
	}
	return res, nil
}
