//go:build !race

package schema

// raceDetector: see race_test.go.
const raceDetector = false
