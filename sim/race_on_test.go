//go:build race

package sim

// raceEnabled: the tests run under the race detector (slow: skip the big runs).
const raceEnabled = true
