//go:build !race

package certify

const raceEnabled = false
