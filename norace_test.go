//go:build !race

package contractguard

// raceDetector: see race_test.go.
const raceDetector = false
