//go:build !linux

package bench

import (
	"errors"
	"fmt"
)

func readUsage(int) (Usage, error) {
	return Usage{}, fmt.Errorf("bench: reading another process's CPU time: %w", errors.ErrUnsupported)
}
