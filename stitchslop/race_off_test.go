//go:build !race

package stitchslop

const raceEnabled = false
