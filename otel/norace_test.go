//go:build !race

package cgotel_test

const raceEnabled = false
