package hubmcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
	"github.com/hubdev/hub/supervisor"
)

// hubStatus is the hub control endpoint's GET /status.
type hubStatus struct {
	supervisor.State
	Running bool `json:"running"`
}

// adapter is the named adapter's line of st (ok false when the hub runs
// no such adapter).
func (st *hubStatus) adapter(name string) (adapters.Status, bool) {
	for _, a := range st.Adapters {
		if a.Name == name {
			return a, true
		}
	}
	return adapters.Status{}, false
}

// fetchStatus asks the running hub for its adapters' state and ports.
func fetchStatus(ctx context.Context, st *supervisor.State) (*hubStatus, error) {
	code, body, err := supervisor.ControlCall(ctx, st, http.MethodGet, "/status")
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("the hub's control endpoint answered HTTP %d", code)
	}
	var doc hubStatus
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("the hub's control endpoint sent bad JSON: %v", err)
	}
	return &doc, nil
}

// attachHub holds GET /attach open until the hub ends the stream (it is
// stopping) or ctx ends: while it is open the hub does not idle-exit.
func attachHub(ctx context.Context, st *supervisor.State) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, st.Control+"/attach", nil)
	if err != nil {
		return err
	}
	req.Header.Set(supervisor.KeyHeader, st.Key)
	// Checked like every request carrying the key (see ControlTransport).
	tr := supervisor.ControlTransport(st)
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the hub refused to attach: HTTP %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
	}
	return sc.Err()
}

// serveHub serves the bridges of the hub st describes until it goes away
// (or ctx ends), then withdraws their tools.
func (f *face) serveHub(ctx context.Context, st *supervisor.State) {
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	gone := make(chan error, 1)
	go func() { gone <- attachHub(hctx, st) }()
	status, err := fetchStatus(hctx, st)
	if err != nil {
		cancel()
		<-gone
		f.noHub(fmt.Sprintf("the hub (pid %d) does not answer: %v", st.PID, err))
		hub.Sleep(ctx, f.o.Retry)
		return
	}
	f.mu.Lock()
	f.hubSt, f.hubWhy = st, ""
	f.pending = map[string]bool{}
	for _, b := range f.bridges {
		f.pending[b.name] = true
	}
	f.mu.Unlock()
	if len(f.bridges) == 0 {
		f.firstDone()
	}
	f.log.Info("attached to the hub", "pid", st.PID, "control", st.Control)

	var wg sync.WaitGroup
	for _, b := range f.bridges {
		wg.Go(func() { f.follow(hctx, st, b, status) })
	}

	err = <-gone
	cancel()
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	f.log.Warn("the hub went away", "pid", st.PID, "err", err)
	f.noHub(fmt.Sprintf("the hub (pid %d) stopped; its tools come back when a hub runs (`hub start`)", st.PID))
}
