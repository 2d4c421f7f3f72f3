//go:build race

package gateway

// raceEnabled: the race detector adds allocations of its own, so
// allocation counts are not asserted under it.
const raceEnabled = true
