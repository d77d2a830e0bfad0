package explore

import (
	"context"
	"fmt"
	"testing"
)

// An automatic depth is the smallest whose split keeps shared states
// under 5 % and the busiest shard within 1.5× the mean; on a model whose
// whole graph fits in the sample, what the sample predicts is what the
// merged split measures, the merge is exact, and every smaller depth
// misses an aim.
func TestShardDepthAuto(t *testing.T) {
	for _, tc := range []struct {
		m tape
		n int
	}{
		{tape{n: 6, v: 3, flags: 1}, 4},
		{tape{n: 6, v: 3, flags: 1}, 7},
		{tape{n: 5, v: 4, flags: 2}, 3},
		{tape{n: 6, v: 2, flags: 1, bad: 2}, 5},
	} {
		what := fmt.Sprintf("%+v in %d shards", tc.m, tc.n)
		r, err := Run(context.Background(), tc.m, Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		single := NewReport(tc.m, r)
		got, bal := shardRun(t, tc.m, tc.n, AutoDepth)
		sameReport(t, what+", auto depth", got, single)
		sp := got.ShardSplit
		if sp == nil || !sp.Auto {
			t.Fatalf("%s: merged split %+v, want the automatic depth", what, sp)
		}
		if tc.m.bad != 0 {
			continue // the merged counts stop at the violation; the sample does not
		}
		c := Cost(bal, got.Stats.Distinct)
		if sp.Sampled != single.Stats.Distinct || !near(c.Shared, sp.Shared) || !near(c.Balance, sp.Balance) {
			t.Errorf("%s: sample %+v; the merged split measures %+v over %d states", what, sp, c, single.Stats.Distinct)
		}
		if c.Shared > maxSharedShare || c.Balance > maxImbalance {
			t.Errorf("%s: depth %d costs %+v", what, sp.Depth, c)
		}
		for d := range sp.Depth {
			_, b := shardRun(t, tc.m, tc.n, d)
			if c := Cost(b, single.Stats.Distinct); c.Shared <= maxSharedShare && c.Balance <= maxImbalance {
				t.Errorf("%s: chose depth %d, but depth %d already costs only %+v", what, sp.Depth, d, c)
			}
		}
		t.Logf("%s: %v", what, sp)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// The depth chosen is the same for any number of workers and any shard
// index: each shard chooses alone.
func TestShardDepthAutoDeterministic(t *testing.T) {
	m := tape{n: 6, v: 3, flags: 2}
	want := -2
	for i := range 3 {
		for _, w := range []int{1, 3} {
			r, err := Run(context.Background(), m, Options{Workers: w, Shard: Shard{Index: i, Count: 3, Depth: AutoDepth}})
			if err != nil {
				t.Fatal(err)
			}
			if want == -2 {
				want = r.ShardSplit.Depth
			}
			if r.ShardSplit.Depth != want {
				t.Errorf("shard %d with %d workers chose depth %d, another %d", i, w, r.ShardSplit.Depth, want)
			}
		}
	}
}

// A model whose key is never determined within the candidate depths gets
// the cheapest depth there is, and its shards still merge exactly.
func TestShardDepthAutoUndetermined(t *testing.T) {
	m := tape{n: 3, v: 2, flags: 1}
	r, err := Run(context.Background(), m, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := shardRun(t, m, 3, AutoDepth)
	sameReport(t, "auto depth", got, NewReport(m, r))
}
