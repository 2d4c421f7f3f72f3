package opencode

import (
	"context"
	"fmt"
	"net/http"

	"github.com/hubdev/hub/geturl/plugin"
)

// track remembers a worker so admission can count it while it runs.
func (p *Plugin) track(s ocSession) {
	p.mu.Lock()
	p.workers[s.ID] = s.Directory
	p.mu.Unlock()
}

// running counts the tracked workers OpenCode reports busy, except those
// in skip (a worker being continued does not count against itself).
func (c *call) running(ctx context.Context, skip ...string) (int, error) {
	c.p.mu.Lock()
	dirs := map[string][]string{}
	for id, dir := range c.p.workers {
		if !containsStr(skip, id) {
			dirs[dir] = append(dirs[dir], id)
		}
	}
	c.p.mu.Unlock()
	n := 0
	for dir, ids := range dirs {
		st := map[string]ocStatus{}
		if err := c.client().do(ctx, http.MethodGet, query("/session/status", "directory", dir), nil, &st); err != nil {
			return 0, err
		}
		for _, id := range ids {
			if s, ok := st[id]; ok && s.Type != "idle" {
				n++
			}
		}
	}
	return n, nil
}

// admitWorkers reserves n worker slots under max_workers, counting busy
// workers and admissions in flight; release frees the reservation once
// the admitted work shows as busy (or failed).
func (c *call) admitWorkers(ctx context.Context, n int, skip ...string) (func(), error) {
	busy, err := c.running(ctx, skip...)
	if err != nil {
		return nil, err
	}
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	if busy+c.p.pending+n > c.p.cfg.MaxWorkers {
		return nil, &plugin.Error{Code: CodeWorkerLimit, Retryable: true,
			Detail: fmt.Sprintf("%d workers running or starting, %d more asked, max_workers is %d", busy+c.p.pending, n, c.p.cfg.MaxWorkers),
			Hint:   "wait for running workers (opencode_worker wait) or cancel some, then retry"}
	}
	c.p.pending += n
	done := false
	return func() {
		c.p.mu.Lock()
		defer c.p.mu.Unlock()
		if !done {
			c.p.pending -= n
			done = true
		}
	}, nil
}
