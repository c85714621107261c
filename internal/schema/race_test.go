//go:build race

package schema

// raceDetector: the race detector is on. sync.Pool drops items at random
// under it, so tests that count allocations through a pool skip, and
// .ci/run runs them again without it.
const raceDetector = true
