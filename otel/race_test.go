//go:build race

package cgotel_test

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// counts of allocations are not exact under it.
const raceEnabled = true
