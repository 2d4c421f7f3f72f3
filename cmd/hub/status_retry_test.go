package main

import (
	"testing"
	"time"
)

func TestRetryNote(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-2 * time.Second, "retrying now"},
		{0, "retrying now"},
		{499 * time.Millisecond, "retrying now"},
		{999 * time.Millisecond, "retrying now"},
		{time.Second, "retrying in 1s"},
		{1499 * time.Millisecond, "retrying in 1s"},
		{29600 * time.Millisecond, "retrying in 30s"},
	} {
		if got := retryNote(tc.d); got != tc.want {
			t.Errorf("retryNote(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
