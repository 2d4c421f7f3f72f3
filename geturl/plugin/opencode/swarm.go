package opencode

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/hubdev/hub/geturl/plugin"
)

// A swarm is a batch handle over independent workers started together:
// its members carry the swarm id in their metadata, so the handle is as
// durable as the sessions. It is not a scheduler: members never talk to
// each other, the calling agent coordinates.

type swarmSummary struct {
	SwarmID string `json:"swarmID"`
	Members int    `json:"members"`
	Running int    `json:"running"`
	Created int64  `json:"created"`
}

type memberView struct {
	WorkerID string      `json:"workerID"`
	Title    string      `json:"title"`
	Status   string      `json:"status"`
	LastTurn *waitResult `json:"lastTurn,omitempty"`
}

func (c *call) swarm(ctx context.Context) (any, error) {
	a := c.a
	if a.Action == "swarm_start" {
		return c.swarmStart(ctx)
	}
	if a.Action != "swarm_list" && a.SwarmID == "" {
		return nil, missing(a.Action, "swarmID")
	}
	ss, _, ms, err := c.listWorkers(ctx)
	if err != nil {
		return nil, err
	}
	st, err := c.statuses(ctx, c.scope.Root())
	if err != nil {
		return nil, err
	}
	if a.Action == "swarm_list" {
		by := map[string]*swarmSummary{}
		for i, s := range ss {
			id := ms[i].Swarm
			if id == "" {
				continue
			}
			sum := by[id]
			if sum == nil {
				sum = &swarmSummary{SwarmID: id, Created: s.Time.Created}
				by[id] = sum
			}
			sum.Members++
			if t, ok := st[s.ID]; ok && t.Type != "idle" {
				sum.Running++
			}
			sum.Created = min(sum.Created, s.Time.Created)
		}
		out := []swarmSummary{}
		for _, v := range by {
			out = append(out, *v)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Created > out[j].Created })
		return map[string]any{"action": a.Action, "swarms": out}, nil
	}
	var members []ocSession
	var mm []meta
	for i, s := range ss {
		if ms[i].Swarm == a.SwarmID {
			members, mm = append(members, s), append(mm, ms[i])
		}
	}
	if len(members) == 0 {
		return nil, plugin.Errorf(CodeNotFound, false, "no swarm %s among this project's workers", a.SwarmID)
	}
	switch a.Action {
	case "swarm_get":
		return c.swarmState(ctx, members, mm, 0)
	case "swarm_wait":
		return c.swarmState(ctx, members, mm, c.timeout(defaultWorkWait))
	case "swarm_cancel":
		n := 0
		for _, s := range members {
			if t, ok := st[s.ID]; ok && t.Type != "idle" {
				if err := c.client().do(ctx, http.MethodPost, query("/session/"+s.ID+"/abort", "directory", s.Directory), nil, nil); err != nil {
					return nil, err
				}
				n++
			}
		}
		return map[string]any{"action": a.Action, "swarmID": a.SwarmID, "cancelled": n, "members": len(members)}, nil
	case "swarm_continue":
		if strings.TrimSpace(a.Prompt) == "" {
			return nil, missing(a.Action, "prompt")
		}
		ids := make([]string, len(members))
		for i, s := range members {
			ids[i] = s.ID
		}
		release, err := c.admitWorkers(ctx, len(members), ids...)
		if err != nil {
			return nil, err
		}
		defer release()
		var out []any
		for _, s := range members {
			mid := c.p.ids.next("msg")
			s2, err := c.recordTurn(ctx, s, mid)
			if err != nil {
				out = append(out, map[string]any{"workerID": s.ID, "error": toolError(err).Error()})
				continue
			}
			ad, err := c.admit(ctx, s2, mid, a.Prompt, a.Agent, a.Model)
			if err != nil {
				out = append(out, map[string]any{"workerID": s.ID, "messageID": mid, "error": toolError(err).Error()})
				continue
			}
			out = append(out, ad)
		}
		return map[string]any{"action": a.Action, "swarmID": a.SwarmID, "admitted": out}, nil
	}
	return nil, plugin.Errorf(CodeUnknownAction, false, "unhandled action %q", a.Action)
}

// swarmStart starts every task as an independent worker, all or none
// admitted against max_workers.
func (c *call) swarmStart(ctx context.Context) (any, error) {
	a := c.a
	if len(a.Tasks) == 0 {
		return nil, missing(a.Action, "tasks (1 to max_workers prompts)")
	}
	if len(a.Tasks) > c.p.cfg.MaxWorkers {
		return nil, badArgs("%d tasks exceed max_workers %d", len(a.Tasks), c.p.cfg.MaxWorkers)
	}
	wd, err := c.workdir()
	if err != nil {
		return nil, err
	}
	release, err := c.admitWorkers(ctx, len(a.Tasks))
	if err != nil {
		return nil, err
	}
	defer release()
	g, err := c.group(ctx)
	if err != nil {
		return nil, err
	}
	id := "swm_" + randomBase62(16)
	members := make([]startedWorker, 0, len(a.Tasks))
	for _, t := range a.Tasks {
		w, err := c.startWorker(ctx, g, wd.Host, wd.Virtual, t.Prompt, t.Title, id)
		if err != nil {
			// Independent workers: one failure does not undo the others.
			w.Error = toolError(err).Error()
		}
		members = append(members, w)
	}
	return map[string]any{"action": a.Action, "swarmID": id, "members": members, "ceiling": viewCeiling(c.auth, c.p.cfg.AllowNested)}, nil
}

// swarmState reports each member's last turn, waiting up to timeout for
// all of them to end or block.
func (c *call) swarmState(ctx context.Context, members []ocSession, mm []meta, timeout time.Duration) (any, error) {
	start := c.p.now()
	for {
		out := make([]memberView, 0, len(members))
		settled := 0
		for i, s := range members {
			v := memberView{WorkerID: s.ID, Title: mm[i].Label, Status: "idle"}
			if len(mm[i].Turns) > 0 {
				r, err := c.turnState(ctx, s, mm[i].Turns[len(mm[i].Turns)-1])
				if err != nil {
					return nil, err
				}
				v.LastTurn = &r
				if !r.Done {
					v.Status = "running"
				}
				if r.Done || r.Blocked != nil {
					settled++
				}
			} else {
				settled++
			}
			out = append(out, v)
		}
		waited := c.p.now().Sub(start)
		if settled == len(members) || waited >= timeout {
			return map[string]any{"action": c.a.Action, "swarmID": c.a.SwarmID, "members": out,
				"done": settled == len(members), "waitedMs": waited.Milliseconds()}, nil
		}
		if err := c.p.sleep(ctx, c.p.poll); err != nil {
			return nil, err
		}
	}
}
