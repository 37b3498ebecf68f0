//go:build !race

package golden

// raceDetector: see race_test.go.
const raceDetector = false
