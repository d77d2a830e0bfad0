//go:build !race

package protocols

const classicRace = false
