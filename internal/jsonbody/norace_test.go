//go:build !race

package jsonbody

// raceDetector: see race_test.go.
const raceDetector = false
