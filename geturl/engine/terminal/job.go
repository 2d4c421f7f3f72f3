package terminal

import (
	"context"
	"sync"
	"time"
)

// State is where a Job stands. It maps onto the journal's intent states:
// Queued is pending, Running is running, Done is succeeded or failed.
type State string

const (
	Queued  State = "queued"
	Running State = "running"
	Done    State = "done"
)

// Job is one command the terminal accepted: a foreground run (Job[*Result])
// or a background launch (Job[*Launched]). It goes on by itself once made;
// the caller waits for it as long as it likes, and a caller that stopped
// waiting (its first answer was due) can come back for the result later.
type Job[T any] struct {
	clock     Clock
	cancel    context.CancelFunc
	started   chan struct{}
	startOnce sync.Once
	done      chan struct{}
	res       T
	err       error
}

func newJob[T any](clock Clock, cancel context.CancelFunc) *Job[T] {
	return &Job[T]{clock: clock, cancel: cancel, started: make(chan struct{}), done: make(chan struct{})}
}

// Started is closed when the job left the queue: its process was started,
// or it failed before one could be.
func (j *Job[T]) Started() <-chan struct{} { return j.started }

// Done is closed when the result is ready.
func (j *Job[T]) Done() <-chan struct{} { return j.done }

// State reports whether the job is queued, running or done.
func (j *Job[T]) State() State {
	select {
	case <-j.done:
		return Done
	default:
	}
	select {
	case <-j.started:
		return Running
	default:
		return Queued
	}
}

// Result returns the outcome once Done is closed (the zero T and a nil
// error before). Exactly one of them is set: a *Error when the command
// could not run to a result.
func (j *Job[T]) Result() (T, error) {
	select {
	case <-j.done:
		return j.res, j.err
	default:
		var zero T
		return zero, nil
	}
}

// Wait blocks until the job is done or ctx ends; ending ctx only stops the
// waiting (the job goes on).
func (j *Job[T]) Wait(ctx context.Context) (T, error) {
	select {
	case <-j.done:
		return j.res, j.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// Await waits at most wait (by the manager's clock) and reports whether the
// job finished: this is the bounded first answer of a wait= request.
func (j *Job[T]) Await(wait time.Duration) (res T, finished bool, err error) {
	if wait > 0 {
		select {
		case <-j.done:
		case <-j.clock.After(wait):
		}
	}
	select {
	case <-j.done:
		return j.res, true, j.err
	default:
		var zero T
		return zero, false, nil
	}
}

// Cancel abandons the job: a queued one leaves the queue, a running
// foreground command or a background launch still in its startup window
// has its process tree killed. A background process past its startup is
// stopped with Runner.Stop instead.
func (j *Job[T]) Cancel() { j.cancel() }

func (j *Job[T]) markStarted() { j.startOnce.Do(func() { close(j.started) }) }

func (j *Job[T]) finish(res T, err *Error) {
	j.markStarted()
	j.res = res
	if err != nil {
		j.err = err
	}
	close(j.done)
}
