package explore

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// A sharded search splits one run into Count independent parts that need
// no communication while they run and merge into exactly the single run's
// answer.
//
// The model declares a shard key (Sharder): a value of a state that, once
// determined, never changes along any path. Shard i explores the states
// whose key is undetermined (every shard explores those) and the determined
// states whose key it owns; it drops every other successor before the seen
// set. Why the merge is exact:
//
//   - A predecessor of an undetermined state is undetermined, and every
//     predecessor of a state with key k is undetermined or has key k (keys
//     never change). So shard i holds every predecessor of each state it
//     holds: its levels are the single run's levels restricted to its
//     states, in the same order (the order of a level is the lexicographic
//     order of the first path that reaches each state, and that path runs
//     through states of shard i only).
//   - Hence each state's depth and first path are the same in its shard as
//     in the single run; distinct, generated and coverage add up over the
//     shards per level once the undetermined states (counted in every
//     shard) are counted once.
//   - The single run's counterexample is the earliest violation in BFS
//     order: shortest first, then smallest first path. Each shard reports
//     its own earliest with its path (Violation.Path); the smallest over
//     the shards is the single run's.
//
// A model without a shard key cannot be sharded exactly: Run refuses it.

// Shard names one part of a sharded search: the states whose key the shard
// owns are those with owner(key, Count) == Index. Count 0 means unsharded.
// Depth is handed to the model's ShardKey: how fine a key to use (for
// instance, how much of a state's history the key covers). It changes
// how the search splits, never what it finds.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
	Depth int `json:"depth"`
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Sharder is implemented by models that can be sharded: ShardKey returns a
// state's partition key at the given depth and whether it is determined
// yet. A determined key must never change along any path from the state.
type Sharder[S any] interface {
	ShardKey(s *S, depth int) (key uint64, determined bool)
}

// owner maps a key to a shard: a 64-bit mix (splitmix64's finalizer), so
// nearby keys spread, then the remainder.
func owner(key uint64, count int) int {
	key ^= key >> 30
	key *= 0xbf58476d1ce4e5b9
	key ^= key >> 27
	key *= 0x94d049bb133111eb
	key ^= key >> 31
	return int(key % uint64(count))
}

// ShardLevel is what one shard explored at one BFS level; Shared parts are
// those of undetermined states, which every shard explores alike.
type ShardLevel struct {
	States          uint64   `json:"states"`           // states of this level
	Shared          uint64   `json:"shared"`           // of which undetermined
	Generated       uint64   `json:"generated"`        // successors computed from this level's states
	SharedGenerated uint64   `json:"shared_generated"` // of which from undetermined states
	Coverage        []uint64 `json:"coverage"`         // per action kind, from this level's states
	SharedCoverage  []uint64 `json:"shared_coverage"`
}

// ShardReport is one shard's report (with its Levels): what Merge combines.
type ShardReport struct {
	Shard  Shard  `json:"shard"`
	Report Report `json:"report"`
}

// ShardBalance is one shard's share of a merged run.
type ShardBalance struct {
	Shard   Shard         `json:"shard"`
	Owned   uint64        `json:"owned"`  // determined states it explored
	Shared  uint64        `json:"shared"` // undetermined states (explored by every shard)
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Merge combines the reports of every shard of one search (indexes 0..N-1,
// each once) into the single run's report, and each shard's share.
func Merge(parts []ShardReport) (Report, []ShardBalance, error) {
	if len(parts) == 0 {
		return Report{}, nil, fmt.Errorf("no shard results to merge")
	}
	n := parts[0].Shard.Count
	byIndex := make([]*ShardReport, n)
	for i := range parts {
		p := &parts[i]
		switch {
		case p.Shard.Count != n || p.depth() != parts[0].depth():
			return Report{}, nil, fmt.Errorf("shard %v (depth %d) and shard %v (depth %d) are parts of different splits", p.Shard, p.depth(), parts[0].Shard, parts[0].depth())
		case p.Shard.Index < 0 || p.Shard.Index >= n:
			return Report{}, nil, fmt.Errorf("shard %v: index out of range", p.Shard)
		case byIndex[p.Shard.Index] != nil:
			return Report{}, nil, fmt.Errorf("shard %v given twice", p.Shard)
		}
		byIndex[p.Shard.Index] = p
	}
	for i, p := range byIndex {
		if p == nil {
			return Report{}, nil, fmt.Errorf("shard %d/%d is missing (%d of %d given)", i, n, len(parts), n)
		}
		if p.Report.VerdictName == Incomplete.String() {
			return Report{}, nil, fmt.Errorf("shard %v did not finish (incomplete): run it again", p.Shard)
		}
	}

	// The earliest violation in BFS order, and the levels the single run
	// would have explored before stopping there.
	var best *TraceReport
	for _, p := range byIndex {
		if v := p.Report.Violation; v != nil && (best == nil || earlier(v, best)) {
			best = v
		}
	}
	statesUpTo, genUpTo, reachUpTo := -1, -1, -1
	for _, p := range byIndex {
		statesUpTo = max(statesUpTo, len(p.Report.Levels)-1)
	}
	genUpTo, reachUpTo = statesUpTo, statesUpTo+1
	if best != nil {
		d := len(best.Path) - 1
		switch {
		case best.Property == "deadlock":
			statesUpTo, genUpTo, reachUpTo = d, d, d+1
		case d == 0:
			statesUpTo, genUpTo, reachUpTo = 0, -1, 0
		default:
			statesUpTo, genUpTo, reachUpTo = d-1, d-1, d
		}
	}

	first := &byIndex[0].Report
	rep := Report{Coverage: slices.Clone(first.Coverage), Sometimes: slices.Clone(first.Sometimes), ShardSplit: first.ShardSplit}
	for k := range rep.Coverage {
		rep.Coverage[k].Count = 0
	}
	balance := make([]ShardBalance, n)
	for d := 0; d <= statesUpTo || d <= genUpTo; d++ {
		var shared *ShardLevel
		var states uint64
		for i, p := range byIndex {
			if d >= len(p.Report.Levels) {
				continue
			}
			l := &p.Report.Levels[d]
			if shared == nil {
				shared = l
			} else if l.Shared != shared.Shared || l.SharedGenerated != shared.SharedGenerated {
				return Report{}, nil, fmt.Errorf("shards %v and %v disagree on the undetermined states of level %d: not one search", byIndex[0].Shard, p.Shard, d)
			}
			if d <= statesUpTo {
				states += l.States - l.Shared
				balance[i].Owned += l.States - l.Shared
			}
			if d <= genUpTo {
				rep.Stats.Generated += l.Generated - l.SharedGenerated
				for k := range rep.Coverage {
					if k < len(l.Coverage) {
						rep.Coverage[k].Count += l.Coverage[k] - l.SharedCoverage[k]
					}
				}
			}
		}
		if shared == nil {
			continue
		}
		if d <= statesUpTo {
			states += shared.Shared
			for i := range balance {
				balance[i].Shared += shared.Shared
			}
			rep.Stats.Distinct += states
			if d == 0 {
				rep.Stats.Initial = states
			}
			rep.Stats.QueuePeak = max(rep.Stats.QueuePeak, states)
			if states > 0 {
				rep.Stats.Depth = d
			}
		}
		if d <= genUpTo {
			rep.Stats.Generated += shared.SharedGenerated
			for k := range rep.Coverage {
				if k < len(shared.SharedCoverage) {
					rep.Coverage[k].Count += shared.SharedCoverage[k]
				}
			}
		}
	}
	for k := range rep.Sometimes {
		r := &rep.Sometimes[k]
		r.Reached, r.Depth = false, 0
		for _, p := range byIndex {
			if k >= len(p.Report.Sometimes) {
				continue
			}
			q := p.Report.Sometimes[k]
			if q.Reached && q.Depth <= reachUpTo && (!r.Reached || q.Depth < r.Depth) {
				r.Reached, r.Depth = true, q.Depth
			}
		}
	}
	for i, p := range byIndex {
		balance[i].Shard, balance[i].Elapsed = p.Shard, p.Report.Stats.Elapsed
		rep.Stats.Elapsed = max(rep.Stats.Elapsed, p.Report.Stats.Elapsed)
		rep.Stats.OnDisk = rep.Stats.OnDisk || p.Report.Stats.OnDisk
	}
	rep.Verdict = Pass
	if best != nil {
		rep.Verdict, rep.Violation = Violated, best
		rep.Stats.Depth = len(best.Path) - 1
	}
	// Every shard runs Init in full: TLC's generated adds what it returned.
	if f := first.Stats; f.TLCGenerated >= f.Generated {
		rep.Stats.TLCGenerated = rep.Stats.Generated + f.TLCGenerated - f.Generated
	}
	rep.Stats.TLCDepth = tlcDepth(rep.Stats.Depth, rep.Stats.Distinct)
	rep.VerdictName = rep.Verdict.String()
	rep.Collision = collision(rep.Stats.Distinct)
	return rep, balance, nil
}

// depth is the key depth the shard ran with: the one it reports having
// used (an automatic depth is only known once the shard ran), else the
// one it was given.
func (p *ShardReport) depth() int {
	if sp := p.Report.ShardSplit; sp != nil {
		return sp.Depth
	}
	return p.Shard.Depth
}

// SplitCost is what splitting a search cost over running it whole.
type SplitCost struct {
	Shared  float64 // share of the distinct states undetermined, explored by every shard
	Work    float64 // states explored by all shards together over the distinct states
	Balance float64 // the busiest shard's determined states over the mean
}

// Cost measures a merged split from its shards' shares and the merged
// distinct count.
func Cost(balance []ShardBalance, distinct uint64) SplitCost {
	if len(balance) == 0 || distinct == 0 {
		return SplitCost{}
	}
	n := float64(len(balance))
	var owned, most uint64
	for _, b := range balance {
		owned, most = owned+b.Owned, max(most, b.Owned)
	}
	c := SplitCost{
		Shared:  float64(balance[0].Shared) / float64(distinct),
		Work:    (n*float64(balance[0].Shared) + float64(owned)) / float64(distinct),
		Balance: n,
	}
	if owned > 0 {
		c.Balance = float64(most) * n / float64(owned)
	}
	return c
}

// earlier orders violations as a single run does: shorter trace first, then
// the smaller first path (initial state's index, then each action's
// position).
func earlier(a, b *TraceReport) bool {
	if len(a.Path) != len(b.Path) {
		return len(a.Path) < len(b.Path)
	}
	return slices.Compare(a.Path, b.Path) < 0 || slices.Equal(a.Path, b.Path) && cmp.Less(a.Property, b.Property)
}

// owns reports whether this run explores s: always unsharded; sharded, when
// its key is undetermined (shared) or this shard owns it.
func (e *engine[S, A]) owns(s *S) (shared, mine bool) {
	if e.sharder == nil {
		return false, true
	}
	key, determined := e.sharder.ShardKey(s, e.opts.Shard.Depth)
	if !determined {
		return true, true
	}
	return false, owner(key, e.opts.Shard.Count) == e.opts.Shard.Index
}
