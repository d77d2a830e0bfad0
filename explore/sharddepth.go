package explore

import (
	"fmt"
	"math"
)

// AutoDepth as Shard.Depth asks the engine to choose the key depth from
// the search itself (chooseDepth). The choice is a function of the model,
// its constraints and the shard count only, so every shard of a search
// makes the same one; it is part of the search identity as "auto".
const AutoDepth = -1

// The sample behind an automatic depth: the first states of the search in
// BFS order, at most sampleStates of them, keyed at every depth up to
// maxAutoDepth.
const (
	sampleStates = 1 << 15
	maxAutoDepth = 6
)

// What an automatic depth aims at, measured on the sample: undetermined
// states (explored by every shard) at most maxSharedShare of the states,
// and the busiest shard's determined states at most maxImbalance times
// the mean.
const (
	maxSharedShare = 0.05
	maxImbalance   = 1.5
)

// ShardSplit is how a sharded run split its search: the key depth used,
// and what the sample of the search's first states predicted of that depth
// (Auto only).
type ShardSplit struct {
	Depth   int     `json:"depth"`
	Auto    bool    `json:"auto"`              // chosen from the sample
	Sampled uint64  `json:"sampled,omitempty"` // states in the sample
	Shared  float64 `json:"shared,omitempty"`  // undetermined share of the sample at Depth
	Balance float64 `json:"balance,omitempty"` // busiest shard's determined states over the mean, in the sample
}

func (s ShardSplit) String() string {
	if !s.Auto {
		return fmt.Sprintf("depth %d", s.Depth)
	}
	return fmt.Sprintf("depth %d (auto: in the first %d states, %.1f%% undetermined, busiest shard %.2f× the mean)", s.Depth, s.Sampled, 100*s.Shared, s.Balance)
}

// depthSample counts, for each candidate depth, the sample's undetermined
// states and its determined states per shard.
type depthSample struct {
	states uint64
	shared [maxAutoDepth + 1]uint64
	owned  [maxAutoDepth + 1][]uint64
}

// chooseDepth explores the first states of the search breadth first (one
// goroutine, in the engine's order, so the sample is the same on every
// shard and for any number of workers) and picks the key depth: the
// smallest one that keeps shared states and imbalance within the aims on
// the sample, else the one with the least estimated wall time (shared
// states plus the busiest shard's share), the smaller on a tie. Shared
// states only become rarer later in a search, so the sample overstates
// them.
func (e *engine[S, A]) chooseDepth() ShardSplit {
	n := e.opts.Shard.Count
	smp := e.sampleDepths(n)
	best, bestCost := 0, math.Inf(1)
	var bestShare, bestBal float64
	for d := 0; d <= maxAutoDepth; d++ {
		share, bal := smp.measure(d, n)
		if share <= maxSharedShare && bal <= maxImbalance {
			return ShardSplit{Depth: d, Auto: true, Sampled: smp.states, Shared: share, Balance: bal}
		}
		// Wall time of the slowest shard, in states: every shared state,
		// and its own share of the determined ones.
		cost := share + (1-share)/float64(n)*bal
		if cost < bestCost {
			best, bestCost, bestShare, bestBal = d, cost, share, bal
		}
	}
	return ShardSplit{Depth: best, Auto: true, Sampled: smp.states, Shared: bestShare, Balance: bestBal}
}

// measure returns the undetermined share of the sample at depth d and the
// busiest shard's determined states over the mean (n when none is
// determined: one shard would do all the work).
func (smp *depthSample) measure(d, n int) (share, balance float64) {
	if smp.states == 0 {
		return 0, 1
	}
	share = float64(smp.shared[d]) / float64(smp.states)
	var most, all uint64
	for _, c := range smp.owned[d] {
		most, all = max(most, c), all+c
	}
	if all == 0 {
		return share, float64(n)
	}
	return share, float64(most) * float64(n) / float64(all)
}

// sampleDepths explores up to sampleStates states breadth first, under the
// model's constraints, and keys each at every candidate depth.
func (e *engine[S, A]) sampleDepths(n int) *depthSample {
	smp := &depthSample{}
	for d := range smp.owned {
		smp.owned[d] = make([]uint64, n)
	}
	seen := make(map[uint64]bool)
	var enc []byte
	keep := func(s *S) bool {
		if uint64(len(seen)) >= sampleStates {
			return false
		}
		enc = e.fpenc.Encode(s, enc[:0])
		fp := fingerprint(enc)
		if seen[fp] {
			return false
		}
		seen[fp] = true
		smp.states++
		for d := 0; d <= maxAutoDepth; d++ {
			if key, det := e.sharder.ShardKey(s, d); det {
				smp.owned[d][owner(key, n)]++
			} else {
				smp.shared[d]++
			}
		}
		return true
	}
	var level []S
	for _, s := range e.m.Init() {
		if e.cons.inState(&s) && keep(&s) {
			level = append(level, s)
		}
	}
	var acts []A
	for len(level) > 0 && uint64(len(seen)) < sampleStates {
		var next []S
		for i := range level {
			s := &level[i]
			acts = e.m.Actions(s, acts[:0])
			for _, a := range acts {
				t := *s
				if !e.m.Next(s, a, &t) || e.cons.any && !e.cons.inStep(s, a, &t) {
					continue
				}
				if keep(&t) {
					next = append(next, t)
				}
			}
		}
		level = next
	}
	return smp
}
