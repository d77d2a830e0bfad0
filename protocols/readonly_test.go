package protocols

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
)

func newReadonlyModel(cfg Config) *readonly { return newReadonly(cfg).(*readonly) }

// Reference: §7.4, Thm 7, Prop 4 — every invariant holds on the read-only
// capture (every base store, every start, reads at any boundary), every action
// is taken, and the counts do not depend on the number of workers.
func TestReadonlyPasses(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		slow bool
	}{
		{"1 key", Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, InitialAny: true}, false},
		{"2 keys 2 chunks", Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 2, InitialAny: true}, false},
		{"2 keys 1 chunk txn 2", Config{Keys: 2, Values: 1, Events: 3, Chunks: 1, Txn: 2, InitialAny: true}, false},
		{"3 keys 3 events", Config{Keys: 3, Values: 2, Events: 3, Chunks: 2, Txn: 2}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.slow && wdSmall() {
				t.Skip("short or race build")
			}
			m := newReadonly(tt.cfg)
			r1 := wdRun(t, m, 1)
			if r1.Verdict != explore.Pass {
				t.Fatalf("%v: %v\n%s", tt.cfg, r1.Verdict, wdTrace(m, r1.Violation))
			}
			r2 := wdRun(t, m, 2)
			if r1.Stats.Distinct != r2.Stats.Distinct || r1.Stats.Generated != r2.Stats.Generated || r1.Stats.Depth != r2.Stats.Depth {
				t.Errorf("1 worker: %+v; 2 workers: %+v", r1.Stats, r2.Stats)
			}
			for _, c := range r1.Coverage {
				if c.Count == 0 {
					t.Errorf("action %s never taken", c.Name)
				}
			}
		})
	}
}

// Reference: §7.4, A-read, A-discard, S-OBS — exact counts, from an
// enumerator written from the paper's description (roEnumerate below: its
// own states, a Go map as the seen set, no engine and no fingerprints).
//
// By hand, at 1 key / 1 value / 1 event / 1 chunk over the empty store, the
// source commits x = k0 := 1 at most once; the capture samples low (SL),
// reads k0 at a boundary of [lo, now] (RK), samples high (SH) and the
// consumer releases; the consumer consumes x, or moves its start past it
// (start-later, up to lo), but never consumes x while k0 is being read when x
// lies in the window (x after lo):
//   - before SL: {}; [x]; [x] consumed; [x] skipped by the start         4
//   - SL at 0: {}; [x] (x is in the window: the consumer waits).
//     SL at 1: [x] unconsumed, consumed, skipped                         5
//   - RK: lo 0: {} read ⊥@0; [x] read ⊥@0; [x] read 1@1. lo 1: read
//     1@1, with x unconsumed, consumed, skipped                          6
//   - SH: lo 0, ⊥@0, hi 0: {}; [x] (the window is empty: release due).
//     lo 0, ⊥@0, hi 1: x unconsumed, consumed. lo 0, 1@1, hi 1: x
//     unconsumed; consumed (in the window: k0 discarded). lo 1, 1@1,
//     hi 1: x unconsumed, consumed, skipped                              9
//   - released: lo 0, hi 0: {}, [x], [x] consumed; lo 0 hi 1, ⊥@0 and
//     1@1 (the survivor was discarded): one each; lo 1: the survivor
//     k0=1@1 emitted after x consumed, or after x skipped                7
//
// 31 states in all, and the longest shortest path is 6 steps (commit, SL,
// RK, SH, consume, release).
//
// With cfg.NoOps the source may commit y = k0 := ⊥ instead (a delete of the
// absent key); with cfg.WholeServer y = k1 := 1, outside the scope (§7.7).
// Either way k0 reads ⊥ at both boundaries, so nothing is buffered, and
// consuming y moves the consumer (and, for the no-op, tags k0 with 1): each
// of the 26 states over [x] has one twin over [y], and the 5 over the empty
// log are shared: 31 + 26 = 57 states, the depth still 6.
func TestReadonlyCounts(t *testing.T) {
	tests := []struct {
		cfg                       Config
		distinct, generated, deep int
		slow                      bool
	}{
		{Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, 31, 38, 6, false},
		{Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, InitialAny: true}, 62, 76, 6, false},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 2, InitialAny: true}, 3344, 4732, 9, false},
		{Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 2}, 5061, 6672, 12, false},
		{Config{Keys: 2, Values: 2, Events: 3, Chunks: 1, Txn: 2}, 48802, 74053, 11, true},
		{Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, NoOps: true}, 57, 72, 6, false},
		{Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, WholeServer: true}, 57, 72, 6, false},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 2, NoOps: true}, 3170, 4517, 9, false},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 2, WholeServer: true}, 3027, 3980, 12, false},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 2, InitialAny: true, NoOps: true}, 12680, 18068, 9, true},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 2, InitialAny: true, WholeServer: true}, 12108, 15920, 12, true},
	}
	for _, tt := range tests {
		t.Run(tt.cfg.String(), func(t *testing.T) {
			if tt.slow && wdSmall() {
				t.Skip("short or race build")
			}
			bf := roEnumerate(tt.cfg)
			if bf.distinct != tt.distinct || bf.generated != tt.generated || bf.depth != tt.deep {
				t.Errorf("enumerator: %d distinct, %d generated, depth %d; want %d, %d, %d",
					bf.distinct, bf.generated, bf.depth, tt.distinct, tt.generated, tt.deep)
			}
			r := wdRun(t, newReadonly(tt.cfg), 2)
			if r.Verdict != explore.Pass || r.Stats.Distinct != uint64(bf.distinct) || r.Stats.Generated != uint64(bf.generated) || r.Stats.Depth != bf.depth {
				t.Errorf("engine: %v %+v; enumerator %d distinct, %d generated, depth %d",
					r.Verdict, r.Stats, bf.distinct, bf.generated, bf.depth)
			}
		})
	}
}

// Reference: §7.4, Prop 1, Thm 7, S-OBS — the invariants bite on real races:
// every Sometimes property is reached, copy-decides-frontier included (a key
// whose value at the frontier only a copied row supplies).
func TestReadonlySometimes(t *testing.T) {
	for _, cfg := range []Config{
		{Keys: 3, Values: 2, Events: 2, Chunks: 2, Txn: 2},
		{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 2, InitialAny: true},
	} {
		t.Run(cfg.String(), func(t *testing.T) {
			r := wdRun(t, newReadonly(cfg), 2)
			if r.Verdict != explore.Pass {
				t.Fatalf("%v", r.Verdict)
			}
			wdReached(t, r)
		})
	}
}

// readonlyFaultCfg is the bound the fault tests run at: chunk 2 owns two keys
// and a transaction may write two rows.
var readonlyFaultCfg = Config{Keys: 3, Values: 2, Events: 2, Chunks: 2, Txn: 2}

// Reference: Prop 1, Thm 7, §10, A-discard, S-OBS — each fault is killed.
// first is the invariant the full model reports, with its shortest trace;
// breaks is the invariant the fault is meant to break, checked alone, with the
// length of its own shortest trace. Two of the lengths by hand: copy-dropped
// needs a row the consumer never sees (a commit, then the start moved past
// it: 2 steps) and chunk 1 closed (sample, one read, sample, release): 6
// steps break the closed chunk's cut, and chunk 2's five (two reads) the
// frontier, 11 in all. consumer-runs-during-read needs k0 written, the low
// sample, the delete, both consumed, the stale read, the high sample and the
// release: 8 steps break chunk 1's cut, 13 the frontier (the trace,
// TestReadonlyResurrection).
func TestReadonlyFaults(t *testing.T) {
	tests := []struct {
		fault       Fault
		first       string
		firstSteps  int
		breaks      string
		breaksSteps int
	}{
		{SharedReadInstant, "single-read-point", 12, "single-read-point", 12},
		{InteriorExecutedSet, "executed-set-membership", 4, "executed-set-membership", 4},
		{SplitTransaction, "committed-only", 1, "committed-only", 1},
		{NoDiscard, "closed-unit-cut", 8, "frontier-replay", 13},
		{ReleaseBeforeLastRow, "closed-unit-cut", 6, "closed-unit-cut", 6},
		{CopyDropped, "closed-unit-cut", 6, "frontier-replay", 11},
		{ConsumerRunsDuringRead, "closed-unit-cut", 8, "frontier-replay", 13},
	}
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			cfg := readonlyFaultCfg
			cfg.Fault = tt.fault
			m := newReadonly(cfg)
			r := wdRun(t, m, 2)
			if r.Verdict != explore.Violated || r.Violation.Property != tt.first || len(r.Violation.Trace)-1 != tt.firstSteps {
				t.Errorf("full model: want %s in %d steps, got %v\n%s", tt.first, tt.firstSteps, r.Verdict, wdTrace(m, r.Violation))
			}
			only := wdOnly[readonlyState, readonlyAction]{m, []string{tt.breaks}}
			r = wdRun(t, only, 2)
			if r.Verdict != explore.Violated || r.Violation.Property != tt.breaks || len(r.Violation.Trace)-1 != tt.breaksSteps {
				t.Errorf("%s alone: want a violation in %d steps, got %v\n%s", tt.breaks, tt.breaksSteps, r.Verdict, wdTrace(m, r.Violation))
			}
			t.Logf("%s: %s", tt.fault, wdTrace(m, r.Violation))
		})
	}
}

// Reference: Thm 1, S-OBS — copy-dropped is killed by frontier replay at the
// protocol's default bounds and over every base store.
func TestReadonlyCopyDroppedDefaults(t *testing.T) {
	cfgs := []Config{{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 2, InitialAny: true}}
	if !wdSmall() {
		p, err := Lookup("readonly")
		if err != nil {
			t.Fatal(err)
		}
		cfgs = append(cfgs, p.Defaults)
	}
	for _, cfg := range cfgs {
		cfg.Fault = CopyDropped
		m := newReadonly(cfg)
		r := wdRun(t, wdOnly[readonlyState, readonlyAction]{m, []string{invariants.FrontierReplay.Name}}, 2)
		if r.Verdict != explore.Violated {
			t.Fatalf("%v: %v", cfg, r.Verdict)
		}
		t.Logf("%v: %s", cfg, wdTrace(m, r.Violation))
	}
}

// Reference: §7.4 A-discard, issue 9 — when the consumer keeps consuming
// window events while the chunk is read, a read may reflect a coordinate
// before a delete the consumer has already processed: the buffered row is
// never discarded and the release resurrects the deleted value. The shortest
// trace at K2 V2 E2 C1 T1 has exactly that shape; the faithful lifecycle
// passes at the same bounds.
func TestReadonlyResurrection(t *testing.T) {
	cfg := Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 1}
	if r := wdRun(t, newReadonly(cfg), 2); r.Verdict != explore.Pass {
		t.Fatalf("faithful lifecycle: %v", r.Verdict)
	}
	cfg.Fault = ConsumerRunsDuringRead
	m := newReadonlyModel(cfg)
	r := wdRun(t, wdOnly[readonlyState, readonlyAction]{m, []string{invariants.FrontierReplay.Name}}, 2)
	if r.Violation == nil || r.Violation.Property != invariants.FrontierReplay.Name {
		t.Fatalf("want frontier-replay, got %v", r.Verdict)
	}
	t.Logf("%s", wdTrace(m, r.Violation))
	tr := r.Violation.Trace
	last := &tr[len(tr)-1].State.Cap
	k := model.NoKey // the resurrected key: replayed present, deleted at the frontier
	for j := model.Key(0); j < model.Key(cfg.Keys); j++ {
		if last.Out.Val[j] != model.Absent && last.Log.Sigma(last.Pos, j) == model.Absent {
			k = j
		}
	}
	if k == model.NoKey {
		t.Fatalf("no key resurrected:\n%s", wdTrace(m, r.Violation))
	}
	// The decisive steps, in order (the capture's steps come first on ties):
	// the low sample; k := v committed; k := ⊥ committed; the delete
	// consumed; k read as v at the coordinate before the delete; the release
	// emitting k = v.
	step := 0
	next := func(what string, ok func(s readonlyState, a readonlyAction, t readonlyState) bool) {
		for step++; step < len(tr); step++ {
			if ok(tr[step-1].State, tr[step].Action, tr[step].State) {
				return
			}
		}
		t.Fatalf("no step %s after the earlier ones:\n%s", what, wdTrace(m, r.Violation))
	}
	var write, del, lo model.Coord
	var v model.Value
	next("sample low", func(_ readonlyState, a readonlyAction, t readonlyState) bool {
		lo = t.Cap.Plan.Units[0].Lo
		return a.Kind == readonlySampleLow
	})
	next("k := v", func(s readonlyState, a readonlyAction, _ readonlyState) bool {
		write, v = s.Cap.Log.Len()+1, a.Txn.Ev[0].Img
		return a.Kind == readonlyCommit && a.Txn.N == 1 && a.Txn.Ev[0].Key == k && v != model.Absent
	})
	next("k := ⊥", func(s readonlyState, a readonlyAction, _ readonlyState) bool {
		del = s.Cap.Log.Len() + 1
		return a.Kind == readonlyCommit && a.Txn.N == 1 && a.Txn.Ev[0] == model.Event{Key: k, Img: model.Absent}
	})
	next("the delete consumed", func(s readonlyState, a readonlyAction, t readonlyState) bool {
		return a.Kind == readonlyConsume && t.Cap.Pos == del && !t.Cap.Plan.Units[0].Read.Has(k)
	})
	next("k read as v before the delete", func(_ readonlyState, a readonlyAction, t readonlyState) bool {
		u := &t.Cap.Plan.Units[0]
		return a.Kind == readonlyReadKey && u.Read.Has(k) && u.Refresh[k] == v && t.Cap.ReadAt[k] == write && write < del
	})
	next("the release resurrecting k = v", func(s readonlyState, a readonlyAction, t readonlyState) bool {
		return a.Kind == readonlyRelease && t.Cap.Out.Val[k] == v && t.Cap.Out.Tag[k] == del
	})
	if step != len(tr)-1 {
		t.Fatalf("not the resurrection:\n%s", wdTrace(m, r.Violation))
	}
	if lo != 0 || write != 1 || del != 2 {
		t.Errorf("low sample at %d, write at %d, delete at %d; want 0, 1 and 2", lo, write, del)
	}
}

// readonlyAtLogEnd is the capture whose every select reflects the moment it
// runs (the log end): one of the behaviours A-read allows, so each of its
// traces is a trace of the full model.
type readonlyAtLogEnd struct{ *readonly }

func (m readonlyAtLogEnd) Actions(s *readonlyState, buf []readonlyAction) []readonlyAction {
	n := len(buf)
	buf = m.readonly.Actions(s, buf)
	out := buf[:n]
	for _, a := range buf[n:] {
		if a.Kind != readonlyReadKey || a.At == s.Cap.Log.Len() {
			out = append(out, a)
		}
	}
	return out
}

// prop1Shape reports whether a closed unit of c has Proposition 1's shape: two
// keys read at different coordinates of its bracket, each valid at its own,
// and no single coordinate of the bracket explaining both.
func prop1Shape(c *model.Capture, keys int) (a, b model.Key, ok bool) {
	for i := 0; i < int(c.Plan.N); i++ {
		u := &c.Plan.Units[i]
		if !c.UnitClosed(i) {
			continue
		}
		for a := model.Key(0); a < model.Key(keys); a++ {
			for b := a + 1; b < model.Key(keys); b++ {
				if !u.Domain.Has(a) || !u.Domain.Has(b) || c.ReadAt[a] == c.ReadAt[b] {
					continue
				}
				inBracket := func(k model.Key) bool { return u.Lo <= c.ReadAt[k] && c.ReadAt[k] <= u.Hi }
				valid := func(k model.Key) bool { return u.Refresh[k] == c.Log.Sigma(c.ReadAt[k], k) }
				if !inBracket(a) || !inBracket(b) || !valid(a) || !valid(b) {
					continue
				}
				shared := false
				for g := u.Lo; g <= u.Hi; g++ {
					shared = shared || (u.Refresh[a] == c.Log.Sigma(g, a) && u.Refresh[b] == c.Log.Sigma(g, b))
				}
				if !shared {
					return a, b, true
				}
			}
		}
	}
	return 0, 0, false
}

// Reference: Proposition 1 (§4.3), §10 "a forced shared read instant rejects
// Proposition 1's per-key construction" — the shortest counterexample to the
// single-read-point claim has Proposition 1's shape (two keys of one chunk
// read at different coordinates inside its bracket, each valid at its own, no
// single coordinate explaining both), while the contract, the cut and the
// frontier replay hold. With every select reflecting the moment it runs, the
// shortest counterexample is the paper's instance in the paper's order: over
// the empty store, the low sample at c0, a read as ⊥ before e1 = a := v1
// commits, e2 = b := v2, b read as v2 after e2 committed, the high sample at
// c2; the window (c0, c2] holds both events, so the release emits nothing and
// the replay is σ_c2.
func TestReadonlyProposition1(t *testing.T) {
	cfg := Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 1, Fault: SharedReadInstant}
	check := func(t *testing.T, m explore.Model[readonlyState, readonlyAction]) *explore.Violation[readonlyState, readonlyAction] {
		r := wdRun(t, m, 2)
		if r.Violation == nil || r.Violation.Property != invariants.SingleReadPoint.Name {
			t.Fatalf("want single-read-point, got %v", r.Verdict)
		}
		c := &r.Violation.Trace[len(r.Violation.Trace)-1].State.Cap
		a, b, ok := prop1Shape(c, cfg.Keys)
		if !ok {
			t.Fatalf("not Proposition 1's shape:\n%s", wdTrace(m, r.Violation))
		}
		u := &c.Plan.Units[0]
		t.Logf("bracket %v: %v=%v read at %d, %v=%v read at %d; no c in [%d, %d] explains both\n%s",
			u.Window(), a, u.Refresh[a], c.ReadAt[a], b, u.Refresh[b], c.ReadAt[b], u.Lo, u.Hi, wdTrace(m, r.Violation))
		for _, p := range []string{invariants.CheckContract(c, cfg.Chunks), invariants.CheckClosedUnitCut(c), invariants.CheckFrontierReplay(c, cfg.Chunks)} {
			if p != "" {
				t.Errorf("Prop 1 (2)/(3): %s", p)
			}
		}
		if c.Pos < u.Hi || !c.AllClosed(cfg.Chunks) {
			t.Errorf("the frontier is not reached: consumer at %d, hi %d", c.Pos, u.Hi)
		}
		return r.Violation
	}
	t.Run("checker", func(t *testing.T) { check(t, newReadonly(cfg)) })
	t.Run("paper's order", func(t *testing.T) {
		full := newReadonlyModel(cfg)
		m := readonlyAtLogEnd{full}
		v := check(t, m)
		// Every step is a step of the full model.
		for i := 1; i < len(v.Trace); i++ {
			if !slices.Contains(full.Actions(&v.Trace[i-1].State, nil), v.Trace[i].Action) {
				t.Fatalf("step %d is not a step of the full model", i)
			}
		}
		// The decisive steps, in the paper's order.
		var kinds []string
		for i := 1; i < len(v.Trace); i++ {
			s, a := &v.Trace[i-1].State, v.Trace[i].Action
			switch a.Kind {
			case readonlyCommit:
				e := a.Txn.Ev[0]
				kinds = append(kinds, fmt.Sprintf("e%d:%v:%v", s.Cap.Log.Len()+1, e.Key, e.Img != model.Absent))
			case readonlySampleLow:
				kinds = append(kinds, fmt.Sprintf("low@%d", s.Cap.Log.Len()))
			case readonlySampleHigh:
				kinds = append(kinds, fmt.Sprintf("high@%d", s.Cap.Log.Len()))
			case readonlyReadKey:
				k := nextKey(&s.Cap.Plan.Units[0])
				kinds = append(kinds, fmt.Sprintf("read %v=%v@%d", k, s.Cap.Log.Sigma(a.At, k) != model.Absent, a.At))
			}
		}
		want := "low@0 read k0=false@0 e1:k0:true e2:k1:true read k1=true@2 high@2"
		if got := strings.Join(kinds, " "); got != want {
			t.Fatalf("decisive steps %q, want %q\n%s", got, want, wdTrace(m, v))
		}
		c := &v.Trace[len(v.Trace)-1].State.Cap
		if c.Out.Val != c.Log.State(2) || c.Out.Tag[0] != 1 || c.Out.Tag[1] != 2 {
			t.Errorf("replay %v, want the events' images at their own places (σ_c2 = %v)", c.Out, c.Log.State(2))
		}
	})
}

// Reference: §10 "the boundary-valid window-discard replay survives" — under
// interior-executed-set, Theorem 7's membership test breaks, while frontier
// replay, checked alone, holds over the whole bounded space.
func TestReadonlyInteriorReplaySurvives(t *testing.T) {
	cfg := Config{Keys: 3, Values: 2, Events: 3, Chunks: 2, Txn: 2, Fault: InteriorExecutedSet}
	if wdSmall() {
		cfg = Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 2, Fault: InteriorExecutedSet, InitialAny: true}
	}
	m := newReadonly(cfg)
	r := wdRun(t, wdOnly[readonlyState, readonlyAction]{m, []string{invariants.FrontierReplay.Name}}, 2)
	if r.Verdict != explore.Pass {
		t.Fatalf("frontier-replay: %v\n%s", r.Verdict, wdTrace(m, r.Violation))
	}
	t.Logf("interior-executed-set: frontier-replay survives (%v, %d states, depth %d)", cfg, r.Stats.Distinct, r.Stats.Depth)
}

// Reference: §7.4 A-discard, Lemma 6.1, Thm 3 — releasing the buffer once the
// first row of the window's last transaction is processed closes the unit
// while later rows of that transaction are unprocessed: closed-unit-cut fails
// (the table above). Monotonicity fails only when a stale survivor is followed
// by a row below hi, which takes a transaction of three rows; with two, the
// remaining row sits at hi itself and ties with the survivor's tag. The final
// replay is right either way — every row reaches the stream after the release
// — so frontier replay alone survives.
func TestReadonlyReleaseBeforeLastRow(t *testing.T) {
	tests := []struct {
		cfg    Config
		prop   string
		passes bool
	}{
		{Config{Keys: 3, Values: 2, Events: 3, Chunks: 2, Txn: 2}, invariants.Monotonic.Name, true},
		{Config{Keys: 3, Values: 1, Events: 3, Chunks: 1, Txn: 3}, invariants.Monotonic.Name, false},
		{Config{Keys: 3, Values: 2, Events: 3, Chunks: 2, Txn: 2}, invariants.FrontierReplay.Name, true},
		{Config{Keys: 3, Values: 1, Events: 4, Chunks: 1, Txn: 3}, invariants.FrontierReplay.Name, true},
	}
	for _, tt := range tests {
		t.Run(tt.prop+" "+tt.cfg.String(), func(t *testing.T) {
			if tt.passes && wdSmall() {
				t.Skip("short or race build")
			}
			tt.cfg.Fault = ReleaseBeforeLastRow
			m := newReadonly(tt.cfg)
			r := wdRun(t, wdOnly[readonlyState, readonlyAction]{m, []string{tt.prop}}, 2)
			if (r.Verdict == explore.Pass) != tt.passes {
				t.Fatalf("%s: %v\n%s", tt.prop, r.Verdict, wdTrace(m, r.Violation))
			}
			if r.Violation != nil {
				t.Logf("%d steps: %s", len(r.Violation.Trace)-1, wdTrace(m, r.Violation))
			} else {
				t.Logf("holds over %d states", r.Stats.Distinct)
			}
		})
	}
}

// Reference: §7.4 A-read, A-discard — a read is offered at every transaction
// boundary of [lo, now] and never inside a transaction; while the chunk is
// read the consumer processes only events before the window; a stale read is
// discarded by the window event that made it stale once the buffer is
// complete.
func TestReadonlyPerKeyReads(t *testing.T) {
	m := newReadonlyModel(Config{Keys: 2, Values: 2, Events: 3, Chunks: 1, Txn: 2})
	two := Txn{N: 2, Ev: [MaxTxn]model.Event{{Key: 1, Img: 2}, {Key: 0, Img: 1}}}
	del := Txn{N: 1, Ev: [MaxTxn]model.Event{{Key: 1, Img: 0}}}
	reads := func(s readonlyState) []model.Coord {
		var at []model.Coord
		for _, a := range m.Actions(&s, nil) {
			if a.Kind == readonlyReadKey {
				at = append(at, a.At)
			}
		}
		return at
	}

	// Low sample at 0, then t1 (two rows, 1–2) and t2 (3): the boundaries
	// of [0, 3] are 0, 2 and 3.
	s := m.Init()[0]
	m.sampleLow(&s)
	m.commit(&s, two)
	m.commit(&s, del)
	if got := reads(s); !slices.Equal(got, []model.Coord{0, 2, 3}) {
		t.Fatalf("reads offered at %v, want [0 2 3]", got)
	}
	if m.consumerMay(&s) {
		t.Fatal("the consumer may take a window event while the chunk is read")
	}

	// Low sample after t1: the consumer may process t1 during the read, not t2.
	s = m.Init()[0]
	m.commit(&s, two) // t1 at 1–2
	m.sampleLow(&s)   // G(2) = {t1}
	m.commit(&s, del) // t2 at 3: k1 := ⊥
	if got := reads(s); !slices.Equal(got, []model.Coord{2, 3}) {
		t.Fatalf("reads offered at %v, want [2 3]", got)
	}
	for range 2 {
		if !m.consumerMay(&s) {
			t.Fatalf("position %d lies before the window and waits", s.Cap.Pos+1)
		}
		m.consume(&s)
	}
	if m.consumerMay(&s) {
		t.Fatal("the consumer may take t2 while the chunk is read")
	}
	m.readKey(&s, 2) // k0 = 1 at 2
	m.readKey(&s, 2) // k1 = 2 at 2: stale, t2 deletes it at 3
	m.sampleHigh(&s) // G(3) = {t1 t2}
	u := s.Cap.Plan.Units[0]
	if u.Lo != 2 || u.Hi != 3 || s.Cap.ReadAt != [model.MaxKeys]model.Coord{2, 2} || u.Refresh[0] != 1 || u.Refresh[1] != 2 {
		t.Fatalf("unit %+v, reads at %v", u, s.Cap.ReadAt)
	}
	if s.Buf != model.KeySet(0).With(0).With(1) || !m.consumerMay(&s) || !m.inWindow(&s, 3) {
		t.Fatalf("buffer %b, consumer may %v, position 3 in window %v", s.Buf, m.consumerMay(&s), m.inWindow(&s, 3))
	}
	m.consume(&s) // t2 discards the stale k1
	if s.Buf != model.KeySet(0).With(0) || !m.windowDone(&s) {
		t.Fatalf("buffer %b, window done %v", s.Buf, m.windowDone(&s))
	}
	m.release(&s)
	if s.Cap.Out.Val != (model.Store{1, 0}) || s.Cap.Out.Tag[0] != 3 || !s.Cap.UnitClosed(0) {
		t.Fatalf("replay %+v", s.Cap.Out)
	}
}

// Reference: S-OBS (§6.2) — the start may move past positions up to the
// earliest low sample and no further, and only before anything is consumed.
func TestReadonlyStartLater(t *testing.T) {
	m := newReadonlyModel(Config{Keys: 2, Values: 2, Events: 3, Chunks: 2, Txn: 1})
	one := func(k model.Key, v model.Value) Txn { return Txn{N: 1, Ev: [MaxTxn]model.Event{{Key: k, Img: v}}} }
	may := func(s readonlyState) bool {
		return slices.Contains(m.Actions(&s, nil), readonlyAction{Kind: readonlyStartLater})
	}
	s := m.Init()[0]
	m.commit(&s, one(0, 1))
	m.commit(&s, one(1, 1))
	m.sampleLow(&s) // lo = 2
	m.commit(&s, one(0, 2))
	for _, want := range []bool{true, true, false} {
		if may(s) != want {
			t.Fatalf("start %d: start-later %v, want %v", s.Cap.Start, !want, want)
		}
		if want {
			u := s
			m.Next(&s, readonlyAction{Kind: readonlyStartLater}, &u)
			s = u
		}
	}
	if s.Cap.Start != 2 || s.Cap.Pos != 2 || s.Cap.Out != (model.Replayed{}) {
		t.Fatalf("start %d, position %d, replay %+v", s.Cap.Start, s.Cap.Pos, s.Cap.Out)
	}
	s = m.Init()[0]
	m.commit(&s, one(0, 1))
	m.consume(&s)
	m.commit(&s, one(0, 2))
	if may(s) {
		t.Fatal("the start moves after the consumer has consumed")
	}
}

// Encode and Decode are inverses on every state of a small run, and Decode
// refuses short input.
func TestReadonlyEncodeDecode(t *testing.T) {
	for _, f := range []Fault{None, SplitTransaction, InteriorExecutedSet, ConsumerRunsDuringRead} {
		m := newReadonlyModel(Config{Keys: 2, Values: 2, Events: 3, Chunks: 2, Txn: 2, Fault: f, InitialAny: true})
		n := 0
		var walk func(s readonlyState, depth int)
		walk = func(s readonlyState, depth int) {
			enc := m.Encode(&s, nil)
			var d readonlyState
			err := m.Decode(enc, &d)
			want := s
			want.Cap.Dup, want.Cap.Inexact = 0, 0 // marks of the step, not part of the state
			if err != nil || d != want {
				t.Fatalf("round trip of %+v: %+v, %v", s, d, err)
			}
			if err := m.Decode(enc[:len(enc)-1], new(readonlyState)); err == nil {
				t.Fatal("short encoding accepted")
			}
			n++
			if depth == 0 {
				return
			}
			for _, a := range m.Actions(&s, nil) {
				t2 := s
				m.Next(&s, a, &t2)
				walk(t2, depth-1)
			}
		}
		for _, s := range m.Init()[:2] {
			walk(s, 6)
		}
		if n < 100 {
			t.Fatalf("%v: only %d states walked", f, n)
		}
	}
}

// ---- an independent enumerator for readonly (§7.4: A-read, A-discard; S-OBS) ----

type roEv struct{ key, val, txn int }

type roState struct {
	init    []int
	log     []roEv
	lo, hi  []int   // per chunk started
	read    [][]int // per chunk started, per key: value read (-1 not read)
	readAt  []int   // per key
	pos     int
	start   int
	outVal  []int
	outTag  []int
	closed  int
	phase   int // 0 idle, 1 reading, 2 high sampled
	buf     []bool
	started int
}

func (s roState) key() string {
	return fmt.Sprint(s.init, s.log, s.lo, s.hi, s.read, s.readAt, s.pos, s.start, s.outVal, s.outTag, s.closed, s.phase, s.buf, s.started)
}

func (s roState) clone() roState {
	t := s
	t.log = slices.Clone(s.log)
	t.lo, t.hi = slices.Clone(s.lo), slices.Clone(s.hi)
	t.read = make([][]int, len(s.read))
	for i := range s.read {
		t.read[i] = slices.Clone(s.read[i])
	}
	t.readAt = slices.Clone(s.readAt)
	t.outVal, t.outTag = slices.Clone(s.outVal), slices.Clone(s.outTag)
	t.buf = slices.Clone(s.buf)
	return t
}

// sigma is key k's value after the first n log entries (key K, outside the
// scope, starts absent).
func (s *roState) sigma(n, k int) int {
	v := 0
	if k < len(s.init) {
		v = s.init[k]
	}
	for _, e := range s.log[:n] {
		if e.key == k {
			v = e.val
		}
	}
	return v
}

// executed reports whether label x has a row among the first n log entries.
func (s *roState) executed(n, x int) bool {
	for _, e := range s.log[:n] {
		if e.txn == x {
			return true
		}
	}
	return false
}

// boundary: no transaction has rows on both sides of n.
func (s *roState) boundary(n int) bool {
	return n == 0 || n == len(s.log) || s.log[n-1].txn != s.log[n].txn
}

// roTxns is every transaction of 1..room rows on distinct keys, in every
// order, each row changing its key's current value — with cfg.NoOps any
// value, so also the current one (an update to the same value, a delete of
// an absent key); with cfg.WholeServer on key K too, which no chunk owns
// (§7.7).
func roTxns(s *roState, cfg Config, room int) [][]roEv {
	keys := cfg.Keys
	if cfg.WholeServer {
		keys++
	}
	cur := func(k int) int { return s.sigma(len(s.log), k) }
	if cfg.NoOps {
		cur = func(int) int { return -1 }
	}
	return bfTxnsOf(keys, cfg.Values, room, cur, func(k, v int) roEv { return roEv{key: k, val: v} })
}

// roEnumerate enumerates the read-only capture: from every base store (or
// the empty one), the source commits at any time; the capture samples the
// executed set at the log end, reads the chunk's keys one by one, each at any
// boundary from the low sample to the log end, and samples again; the
// consumer walks the log (only events before the window while the chunk is
// read), judging window membership by label, releases the buffer once every
// row of the high set is processed, and before consuming anything may start
// one position later, up to the earliest low sample. With cfg.WholeServer
// the consumer walks key K's events like any other (the window test is by
// label) but passes none of them to the sink.
func roEnumerate(cfg Config) bfWD {
	K, C := cfg.Keys, cfg.Chunks
	stores := bfStores(K, cfg.Values, cfg.InitialAny)
	var inits []roState
	for _, b := range stores {
		inits = append(inits, roState{init: b, readAt: make([]int, K), outVal: make([]int, K), outTag: make([]int, K), buf: make([]bool, K)})
	}
	next := func(s roState) []roState {
		var out []roState
		for _, tx := range roTxns(&s, cfg, min(cfg.Txn, cfg.Events-len(s.log))) {
			t := s.clone()
			label := 1
			if len(t.log) > 0 {
				label = t.log[len(t.log)-1].txn + 1
			}
			for _, e := range tx {
				e.txn = label
				t.log = append(t.log, e)
			}
			out = append(out, t)
		}
		i := s.started - 1
		switch {
		case s.phase == 0 && s.started < C:
			t := s.clone()
			t.lo, t.hi = append(t.lo, len(t.log)), append(t.hi, 0)
			t.read = append(t.read, slices.Repeat([]int{-1}, K))
			t.started++
			t.phase = 1
			out = append(out, t)
		case s.phase == 1:
			a, b := i*K/C, (i+1)*K/C
			k := a
			for k < b && s.read[i][k] >= 0 {
				k++
			}
			if k == b {
				t := s.clone()
				t.hi[i] = len(t.log)
				t.phase = 2
				out = append(out, t)
				break
			}
			for c := s.lo[i]; c <= len(s.log); c++ {
				if !s.boundary(c) {
					continue
				}
				t := s.clone()
				t.read[i][k] = t.sigma(c, k)
				t.readAt[k] = c
				t.buf[k] = t.read[i][k] != 0
				out = append(out, t)
			}
		}
		done := s.phase == 2
		for p := s.pos; done && p < len(s.log); p++ {
			done = !s.executed(s.hi[i], s.log[p].txn)
		}
		switch {
		case done:
			t := s.clone()
			for k := range t.buf {
				if t.buf[k] {
					t.outVal[k], t.outTag[k] = t.read[i][k], t.hi[i]
					t.buf[k] = false
				}
			}
			t.closed++
			t.phase = 0
			out = append(out, t)
		case s.pos < len(s.log) && (s.phase != 1 || s.executed(s.lo[i], s.log[s.pos].txn)):
			t := s.clone()
			e := t.log[t.pos]
			t.pos++
			if e.key < K { // else outside the scope: skipped (§7.7)
				if t.phase == 2 && !t.executed(t.lo[i], e.txn) && t.executed(t.hi[i], e.txn) {
					t.buf[e.key] = false // in the window: the log wins
				}
				t.outVal[e.key], t.outTag[e.key] = e.val, t.pos
			}
			out = append(out, t)
			earliest := len(s.log) + 1
			for _, lo := range s.lo {
				earliest = min(earliest, lo)
			}
			if s.pos == s.start && s.pos < earliest {
				t := s.clone()
				t.pos++
				t.start++
				out = append(out, t)
			}
		}
		return out
	}

	return bfSearchAll(inits, next)
}
