//go:build race

package cgprometheus_test

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// counts of allocations are not exact under it.
const raceEnabled = true
