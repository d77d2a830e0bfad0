//go:build race

package cli

// raceEnabled leaves the larger bounds out of some tests under the race
// detector.
const raceEnabled = true
