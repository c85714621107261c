//go:build !race

package cgprometheus_test

const raceEnabled = false
