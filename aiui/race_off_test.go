//go:build !race

package aiui

const raceEnabled = false
