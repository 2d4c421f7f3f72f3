package adapters

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubdev/hub/hub"
)

func TestFollow(t *testing.T) {
	errBroken := errors.New("broken")
	tests := []struct {
		name     string
		takeAt   int   // Take succeeds on this try (0: never)
		goneAt   int   // Check says gone on this try (0: never)
		takeErr  error // returned by every Take
		cancelAt time.Duration
		want     string
		wantErr  error
		wantTime time.Duration
	}{
		{name: "taken over", takeAt: 3, want: "took", wantTime: 3 * time.Second},
		{name: "gone", goneAt: 2, want: "", wantTime: 2 * time.Second},
		{name: "take fails", takeAt: 0, takeErr: errBroken, wantErr: errBroken, wantTime: time.Second},
		{name: "stopped", cancelAt: 5500 * time.Millisecond, want: "", wantTime: 5500 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := hub.NewLifecycle(hub.IdleRules{})
				env := &Env{Activity: l.Reporter("x"), Follow: FollowTiming{Check: time.Second}}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tc.cancelAt > 0 {
					time.AfterFunc(tc.cancelAt, cancel)
				}
				var readied [][]int
				takes, checks := 0, 0
				start := time.Now()
				got, err := Follow(ctx, env, Outside[string]{
					Ports: []int{7, 8},
					Take: func() (string, bool, error) {
						takes++
						if !l.Activity("x").PageEverAttached {
							t.Error("following does not hold the idle rules off")
						}
						return "took", takes == tc.takeAt, tc.takeErr
					},
					Check: func(context.Context) bool { checks++; return checks == tc.goneAt },
				}, func(p ...int) { readied = append(readied, p) })
				if got != tc.want || !errors.Is(err, tc.wantErr) {
					t.Fatalf("Follow = %q, %v; want %q, %v", got, err, tc.want, tc.wantErr)
				}
				if d := time.Since(start); d != tc.wantTime {
					t.Errorf("Follow returned after %v, want %v", d, tc.wantTime)
				}
				if len(readied) != 1 || !slices.Equal(readied[0], []int{7, 8}) {
					t.Errorf("ready calls %v, want one with [7 8]", readied)
				}
			})
		})
	}
}

// With no ready (reported earlier in the same Serve) Follow reports
// nothing; with neither Take nor Check it follows until ctx ends.
func TestFollowWithoutHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		got, err := Follow(ctx, &Env{}, Outside[int]{Ports: []int{1}}, nil)
		if got != 0 || err != nil {
			t.Fatalf("Follow = %d, %v", got, err)
		}
	})
}
