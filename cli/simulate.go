package cli

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/cutcheck/cutcheck/explore"
)

// simFlags are check's simulation flags: random walks instead of the
// exhaustive search.
type simFlags struct {
	on       bool
	seed     uint64
	depth    int
	walks    int
	duration time.Duration
}

func (s *simFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&s.on, "simulate", false, "check along seeded random walks instead of exploring every state (for bounds too large to exhaust; traces are not necessarily shortest, and finding nothing proves nothing: exit 4)")
	fs.Uint64Var(&s.seed, "seed", 1, "with --simulate: the walks' seed (the same seed gives the same walks)")
	fs.IntVar(&s.depth, "depth", 100, "with --simulate: steps per walk at most")
	fs.IntVar(&s.walks, "walks", 0, "with --simulate: walks to take (0 = until --duration, or 1000 without one)")
	fs.DurationVar(&s.duration, "duration", 0, "with --simulate: start no walk after this long (0 = no limit)")
}

// apply sets opts.Simulate from the flags, refusing simulation flags
// without --simulate and combinations that do not apply.
func (s *simFlags) apply(fs *pflag.FlagSet, opts *explore.Options) error {
	if !s.on {
		for _, name := range []string{"seed", "depth", "walks", "duration"} {
			if fs.Changed(name) {
				return fmt.Errorf("--%s needs --simulate", name)
			}
		}
		return nil
	}
	switch {
	case s.depth < 1:
		return fmt.Errorf("--depth must be ≥ 1, got %d", s.depth)
	case s.walks < 0:
		return fmt.Errorf("--walks must be ≥ 0, got %d", s.walks)
	case s.duration < 0:
		return fmt.Errorf("--duration must be ≥ 0, got %v", s.duration)
	case opts.Shard.Count > 0:
		return fmt.Errorf("--simulate cannot be combined with --shard")
	case opts.CheckSymmetry:
		return fmt.Errorf("--simulate cannot be combined with --check-symmetry (it checks the states of a search, not of random walks)")
	}
	opts.Simulate = &explore.SimOptions{Seed: s.seed, Depth: s.depth, Walks: s.walks, Duration: s.duration}
	return nil
}
