package protocols

import (
	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
)

// EmissionProps are a model's exact-emission check under its discipline d
// (opt-in) and, in a run that keeps the stream's digest
// (cfg.ExactEmission), the emission-judged sometimes-property that shows
// the check compared non-trivial streams. units gives the number of units
// the run records in s (the chunks, for most models); c finds the capture.
func EmissionProps[S, A any](cfg *Config, d invariants.Discipline, units func(s *S) int, c func(s *S) *model.Capture) []explore.Property[S, A] {
	ps := []explore.Property[S, A]{
		invariants.Prop[S, A](invariants.ExactEmission, func(s *S) string {
			return invariants.CheckExactEmission(c(s), units(s), d)
		}),
	}
	if cfg.ExactEmission {
		ps = append(ps, explore.Property[S, A]{Name: "emission-judged", Cite: "Def. 6.2–6.4, §6.5", Kind: explore.Sometimes,
			Check: func(s *S) string { return invariants.EmissionJudged(c(s), units(s), d) }})
	}
	return ps
}

// redundantCopy is the redundant-copy fault, after the event at p has been
// emitted: if it inserted its row (σ was ⊥ just before it), the row goes out
// again as a copy with the event's value and tag. Every value, tag and
// replay stays right; only the exact emission (§6) tells.
func redundantCopy(cfg *Config, c *model.Capture, p model.Coord) {
	if e := c.Log.At(p); cfg.Fault == RedundantCopy && e.Img != model.Absent && c.Log.Sigma(p-1, e.Key) == model.Absent {
		c.EmitCopy(e.Key, e.Img, p)
	}
}

// Chunks is the units of a run that records cfg.Chunks of them, for
// EmissionProps.
func Chunks[S any](cfg *Config) func(*S) int {
	n := cfg.Chunks
	return func(*S) int { return n }
}
