package explore

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// tape is a small model with a natural shard key: writers append symbols
// 1..v to a shared tape of at most n cells while a reader follows; the first
// d cells (with the initial flag) never change once written. bad, when
// non-zero, makes "no-repeat" fail once the reader has read that symbol
// twice in a row.
type tape struct{ n, v, flags, d, bad int }

type tapeState struct {
	Flag, N, R uint8
	Cells      [8]uint8
}

func (m tape) Init() []tapeState {
	var out []tapeState
	for f := range m.flags {
		out = append(out, tapeState{Flag: uint8(f)})
	}
	return out
}

func (m tape) Actions(s *tapeState, buf []int) []int {
	if int(s.N) < m.n {
		for v := 1; v <= m.v; v++ {
			buf = append(buf, v)
		}
	}
	if s.R < s.N {
		buf = append(buf, 0)
	}
	return buf
}

func (m tape) Next(s *tapeState, a int, t *tapeState) bool {
	if a == 0 {
		t.R++
		return true
	}
	t.Cells[t.N] = uint8(a)
	t.N++
	return true
}

func (m tape) Encode(s *tapeState, buf []byte) []byte {
	return append(append(buf, s.Flag, s.N, s.R), s.Cells[:]...)
}

func (m tape) Decode(b []byte, s *tapeState) error {
	if len(b) != 11 {
		return fmt.Errorf("tape: %d bytes", len(b))
	}
	s.Flag, s.N, s.R = b[0], b[1], b[2]
	copy(s.Cells[:], b[3:])
	return nil
}

func (m tape) Properties() []Property[tapeState, int] {
	return []Property[tapeState, int]{
		{Name: "no-repeat", Kind: Always, Check: func(s *tapeState) string {
			if m.bad != 0 && s.R >= 2 && s.Cells[s.R-1] == uint8(m.bad) && s.Cells[s.R-2] == uint8(m.bad) {
				return "read the bad symbol twice"
			}
			return ""
		}},
		{Name: "never-shrinks", Kind: Transition, CheckStep: func(s *tapeState, _ int, t *tapeState) string {
			if t.N < s.N {
				return "tape shrank"
			}
			return ""
		}},
		{Name: "full-and-read", Kind: Sometimes, Check: func(s *tapeState) string {
			if int(s.N) == m.n && s.R == s.N {
				return "done"
			}
			return ""
		}},
		{Name: "flag-one-reads", Kind: Sometimes, Check: func(s *tapeState) string {
			if s.Flag == 1 && s.R > 0 {
				return "read"
			}
			return ""
		}},
	}
}

func (m tape) Describe(s *tapeState, a int) string {
	if a == 0 {
		return "read"
	}
	return fmt.Sprintf("write %d", a)
}
func (m tape) ActionNames() []string  { return []string{"read", "write"} }
func (m tape) ActionKind(a int) int   { return min(a, 1) }
func (m tape) Done(s *tapeState) bool { return int(s.N) == m.n && s.R == s.N }
func (m tape) ShardKey(s *tapeState, d int) (uint64, bool) {
	if int(s.N) < d {
		return 0, false
	}
	k := uint64(s.Flag)
	for i := range d {
		k = k*16 + uint64(s.Cells[i])
	}
	return k, true
}

// shardRun runs every shard of an n-way search of m and merges them.
func shardRun[S, A any](t *testing.T, m Model[S, A], n, depth int) (Report, []ShardBalance) {
	t.Helper()
	var parts []ShardReport
	for i := range n {
		sh := Shard{Index: i, Count: n, Depth: depth}
		r, err := Run(context.Background(), m, Options{Workers: 2, Shard: sh})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, ShardReport{Shard: sh, Report: NewReport(m, r)})
	}
	rep, bal, err := Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	return rep, bal
}

// sameReport fails unless two reports agree on everything but time.
func sameReport(t *testing.T, what string, got, want Report) {
	t.Helper()
	g, w := got.Stats, want.Stats
	if got.VerdictName != want.VerdictName || g.Distinct != w.Distinct || g.Generated != w.Generated || g.Depth != w.Depth || g.QueuePeak != w.QueuePeak {
		t.Errorf("%s: %s %+v; single run %s %+v", what, got.VerdictName, g, want.VerdictName, w)
	}
	if !slices.Equal(got.Coverage, want.Coverage) || !slices.Equal(got.Sometimes, want.Sometimes) {
		t.Errorf("%s: coverage %v sometimes %v; single run %v %v", what, got.Coverage, got.Sometimes, want.Coverage, want.Sometimes)
	}
	gv, wv := got.Violation, want.Violation
	if (gv == nil) != (wv == nil) || gv != nil && (gv.Property != wv.Property || !slices.Equal(gv.Path, wv.Path) || len(gv.Steps) != len(wv.Steps)) {
		t.Errorf("%s: violation %+v; single run %+v", what, gv, wv)
	}
}

// Merged shards equal the single run: counts, coverage, sometimes, and the
// same shortest counterexample, for passing and failing models, any shard
// depth and any number of shards (shard.go's argument).
func TestShardsMergeExactly(t *testing.T) {
	for _, m := range []tape{
		{n: 4, v: 2, flags: 2, d: 0},
		{n: 4, v: 3, flags: 1, d: 1},
		{n: 5, v: 2, flags: 2, d: 2},
		{n: 5, v: 2, flags: 2, d: 3, bad: 2},
		{n: 4, v: 3, flags: 3, d: 1, bad: 1},
		{n: 3, v: 2, flags: 1, d: 5}, // never determined: every shard explores everything
	} {
		r, err := Run(context.Background(), m, Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		single := NewReport(m, r)
		if (m.bad != 0) != (single.Verdict == Violated) {
			t.Fatalf("%+v: single run %v", m, single.Verdict)
		}
		for _, n := range []int{1, 2, 4, 7} {
			got, bal := shardRun(t, m, n, m.d)
			sameReport(t, fmt.Sprintf("%+v in %d shards", m, n), got, single)
			var owned uint64
			for _, b := range bal {
				owned += b.Owned
			}
			if m.bad == 0 && owned+bal[0].Shared != single.Stats.Distinct {
				t.Errorf("%+v in %d shards: owned %d + shared %d ≠ %d", m, n, owned, bal[0].Shared, single.Stats.Distinct)
			}
		}
	}
}

// Merge refuses what is not one whole search.
func TestMergeRefuses(t *testing.T) {
	m := tape{n: 3, v: 2, flags: 1, d: 1}
	one := func(i, n int) ShardReport {
		sh := Shard{Index: i, Count: n}
		r, err := Run(context.Background(), m, Options{Workers: 1, Shard: sh})
		if err != nil {
			t.Fatal(err)
		}
		return ShardReport{Shard: sh, Report: NewReport(m, r)}
	}
	for name, parts := range map[string][]ShardReport{
		"missing": {one(0, 3), one(2, 3)},
		"twice":   {one(0, 2), one(0, 2), one(1, 2)},
		"mixed":   {one(0, 2), one(1, 3)},
		"none":    nil,
	} {
		if _, _, err := Merge(parts); err == nil {
			t.Errorf("%s: merged", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	if _, err := Run(context.Background(), chain{n: 3}, Options{Shard: Shard{Index: 0, Count: 2}}); err == nil {
		t.Error("a model without a shard key was sharded")
	}
}

// A sharded run whose levels are expanded in passes (a small memory budget)
// still merges into the single run: each shard counts a level's states
// once, whatever its passes.
func TestShardsInPasses(t *testing.T) {
	m := tape{n: 7, v: 3, flags: 2, d: 2}
	want, _ := runEngine(t, Model[tapeState, int](m), Options{Workers: 2})
	single := NewReport(m, want)
	var parts []ShardReport
	most := 0
	for i := range 3 {
		sh := Shard{Index: i, Count: 3, Depth: m.d}
		r, passes := runEngine(t, Model[tapeState, int](m), Options{Workers: 2, Shard: sh, MemBudget: 256 << 10})
		most = max(most, passes)
		parts = append(parts, ShardReport{Shard: sh, Report: NewReport(m, r)})
	}
	if most < 2 {
		t.Fatalf("no level took passes: the test does not test them")
	}
	got, _, err := Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	sameReport(t, "3 shards in passes", got, single)
}
