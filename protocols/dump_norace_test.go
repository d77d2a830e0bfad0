//go:build !race

package protocols

const dumpRace = false
