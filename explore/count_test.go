package explore

import (
	"encoding/json"
	"strings"
	"testing"
)

// The Die Hard graph has 16 states over 8 levels, depths 0..7, from one
// initial state: TLC reports 1 + Generated states generated, 16 distinct,
// depth 8 (it counts the initial state as depth 1).
func TestTLCFigures(t *testing.T) {
	m := Model[jugState, jugAction](jugs{})
	b := bruteBFS(m)
	r := run(t, m, Options{Workers: 2})
	s := r.Stats
	if s.Initial != 1 || s.TLCGenerated != uint64(b.generated)+1 || s.TLCDepth != 8 || s.Depth != 7 || len(b.levels) != 8 {
		t.Fatalf("stats %+v; want initial 1, tlc generated %d, tlc depth 8", s, b.generated+1)
	}
	sum := NewReport(m, r).Summary()
	for _, want := range []string{"initial:     1\n", "as TLC:      " + itoa(b.generated+1) + " generated, 16 distinct, depth 8\n"} {
		if !strings.Contains(sum, want) {
			t.Fatalf("summary lacks %q:\n%s", want, sum)
		}
	}
	js, _ := json.Marshal(NewReport(m, r))
	for _, want := range []string{`"initial":1`, `"tlc_generated":` + itoa(b.generated+1), `"tlc_depth":8`} {
		if !strings.Contains(string(js), want) {
			t.Fatalf("JSON lacks %s:\n%s", want, js)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// stutter is a ring of n states with a second action that changes nothing:
// "stay" returns ok=true with the same state (a stuttering step, counted,
// as TLC counts it), "skip" returns ok=false (disabled: not counted).
type stutter struct{ ring }

func (m stutter) Actions(s *int, buf []int) []int { return append(buf, 0, 1, 2) }
func (m stutter) Next(s *int, a int, t *int) bool {
	switch a {
	case 1:
		return true // stay
	case 2:
		return false // skip
	}
	return m.ring.Next(s, a, t)
}
func (m stutter) ActionNames() []string { return []string{"tick", "stay", "skip"} }
func (m stutter) ActionKind(a int) int  { return a }
func (m stutter) Init() []int           { return []int{0, 0, 1} }
func (m stutter) Properties() []Property[int, int] {
	return nil
}

// A ring of 3 with Init = [0, 0, 1]: 2 initial states kept (the duplicate
// dropped), 3 distinct states over depths 0..1. Each state has one tick
// and one stay counted, and one skip not: 3·2 = 6 generated. TLC counts
// the 3 initial states too: 9, depth 2.
func TestStutterAndDisabled(t *testing.T) {
	r := run(t, Model[int, int](stutter{ring{n: 3}}), Options{})
	mustPass(t, r)
	checkStats(t, r.Stats, 6, 3, 1, 2)
	if s := r.Stats; s.Initial != 2 || s.TLCGenerated != 9 || s.TLCDepth != 2 {
		t.Fatalf("stats %+v; want initial 2, tlc generated 9, tlc depth 2", s)
	}
	if c := r.Coverage; c[0].Count != 3 || c[1].Count != 3 || c[2].Count != 0 {
		t.Fatalf("coverage %v; want tick 3, stay 3, skip 0", c)
	}
}

// Merged shards report the single run's TLC figures and initial states.
func TestShardsTLCFigures(t *testing.T) {
	for _, m := range []tape{{n: 4, v: 2, flags: 2, d: 0}, {n: 5, v: 2, flags: 2, d: 3, bad: 2}} {
		r := run(t, Model[tapeState, int](m), Options{Workers: 2})
		for _, n := range []int{1, 3} {
			got, _ := shardRun(t, m, n, m.d)
			g, w := got.Stats, r.Stats
			if g.Initial != w.Initial || g.TLCGenerated != w.TLCGenerated || g.TLCDepth != w.TLCDepth {
				t.Errorf("%+v in %d shards: %+v; single run %+v", m, n, g, w)
			}
		}
	}
}
