//go:build !race

package e2e

// raceDetector is true when the tests run under the race detector.
const raceDetector = false
