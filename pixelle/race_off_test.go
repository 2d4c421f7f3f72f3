//go:build !race

package pixelle

const raceEnabled = false
