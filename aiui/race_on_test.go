//go:build race

package aiui

// raceEnabled: the race detector's shadow memory inflates RSS several
// times, so RSS bounds are not asserted under it.
const raceEnabled = true
