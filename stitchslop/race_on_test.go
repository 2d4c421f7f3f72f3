//go:build race

package stitchslop

// raceEnabled: the race detector adds allocations of its own, so
// allocation counts are not asserted under it.
const raceEnabled = true
