//go:build race

package explore

// raceEnabled shrinks the larger test models under the race detector.
const raceEnabled = true
