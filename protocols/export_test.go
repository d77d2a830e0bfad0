package protocols

// RaceEnabled tells the external tests of this package (package
// protocols_test) that the race detector is on: see classicRace.
const RaceEnabled = classicRace
