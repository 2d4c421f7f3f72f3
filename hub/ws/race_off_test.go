//go:build !race

package ws

const raceEnabled = false
