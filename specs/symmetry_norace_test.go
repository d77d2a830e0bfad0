//go:build !race

package specs

import "github.com/cutcheck/cutcheck/protocols"

func tooLargeForRace(protocols.Config) bool { return false }
