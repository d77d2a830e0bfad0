package protocols

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
)

func runCompositeModel(t *testing.T, m explore.Model[compositeState, compositeAction], opts explore.Options) *explore.Result[compositeState, compositeAction] {
	t.Helper()
	r, err := explore.Run(context.Background(), m, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func runComposite(t *testing.T, cfg Config, workers int) *explore.Result[compositeState, compositeAction] {
	t.Helper()
	return runCompositeModel(t, newComposite(cfg), explore.Options{Workers: workers})
}

// compositeSmall is a bound small enough for -race and -short.
func compositeSmall(mode string) Config {
	return Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 2, Mode: mode, InitialAny: true}
}

// compositeFig3 runs Figure 3's three provenances: a chunked scan, a native
// dump and a point select, one key each, from a store holding two rows.
func compositeFig3() Config {
	return Config{Keys: 3, Values: 1, Events: 2, Chunks: 3, Txn: 2, Mode: CompositeMixed, Initial: model.Store{1, 0, 1}}
}

// Reference: §4.6 Cor 3, Lemma 4.2, Thm 2 — every invariant holds, and the
// result does not depend on the number of workers.
func TestCompositePasses(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"mixed 1 key", Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: CompositeMixed}},
		{"tablesync 1 key", Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: CompositeTablesync}},
		{"tablesync small", compositeSmall(CompositeTablesync)},
		{"mixed fixed store", Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeMixed, Initial: model.Store{2, 1}}},
		{"tablesync more events", Config{Keys: 2, Values: 1, Events: 3, Chunks: 2, Txn: 2, Mode: CompositeTablesync, InitialAny: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r1 := runComposite(t, tt.cfg, 1)
			if r1.Verdict != explore.Pass {
				t.Fatalf("%v: %v\n%s", tt.cfg, r1.Verdict, compositeViolation(newComposite(tt.cfg), r1))
			}
			r2 := runComposite(t, tt.cfg, 2)
			if r1.Stats.Distinct != r2.Stats.Distinct || r1.Stats.Generated != r2.Stats.Generated || r1.Stats.Depth != r2.Stats.Depth {
				t.Errorf("1 worker: %+v, 2 workers: %+v", r1.Stats, r2.Stats)
			}
		})
	}
}

// Reference: §4.6, §6.2 Def. 6.2, §6.4 — exact counts, from an enumerator
// written from the paper's description with its own states (no engine, no
// fingerprints, no buffer: its closes emit Def. 6.2's survivors computed from
// the log, the model's from the buffer it kept step by step).
//
// By hand, tablesync at 1 key / 1 value / 1 event / empty store (one point
// splice, k0 := 1 the only possible event):
//   - before the splice: the log [] (1); the log [k0=1] with the consumer at
//     0, having consumed position 1, or having moved its start past it (3);
//   - splice at r = 0 (reads ⊥, buffers nothing): open with the log [] or
//     [k0=1], closed with either log, and closed with position 1 consumed (5);
//   - splice at r = 1 (buffers k0=1): the consumer at 0; at 1 from s0 = 0
//     (k0=1@1 emitted) or from s0 = 1 (nothing emitted); each of the last two
//     closed, emitting k0=1@1 (5).
//
// 14 states. Transitions: [] commits or splices (2); [k0=1] at 0 splices,
// consumes or starts later (3); the other two pre-splice states splice (1+1);
// r = 0 open with [] commits or closes (2), with [k0=1] closes (1); closed
// with [] commits (1), with [k0=1] consumes (1); r = 1 at 0 consumes or starts
// later (2, the bound is r = 1); at 1 closes (1+1). 16 transitions.
//
// With no-op writes the event may instead be y = k0 := ⊥ (a delete of the
// absent key). The 3 states over [] are shared; over [y] the 11 of [x] recur
// one for one, except that the splice at r = 1 reads ⊥ and buffers nothing,
// so consuming y emits k0 = ⊥@1 and the closes emit nothing: 14 + 11 = 25
// states. Transitions: one more commit from each state over [] (3) and the
// 11 from the [x] states mirrored — 16 + 14 = 30.
func TestCompositeCounts(t *testing.T) {
	// With one key in the chunked unit a read at an earlier boundary gives a
	// state a read at the log end followed by the commits gives too: more
	// transitions, the same states. Two keys (k2 v1 e2 c1 t2) let the later
	// key reflect an earlier state: 3856 states (2132 with one read point).
	tests := []struct {
		cfg                 Config
		distinct, generated uint64
	}{
		{Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: CompositeTablesync}, 14, 16},
		{Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: CompositeMixed}, 33, 42},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeMixed}, 1997, 3550},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 2, Mode: CompositeTablesync, InitialAny: true}, 2724, 4600},
		{Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 2, Mode: CompositeMixed}, 8771, 15654},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 2, Mode: CompositeMixed, InitialAny: true}, 3856, 5820},
		{Config{Keys: 3, Values: 1, Events: 2, Chunks: 3, Txn: 1, Mode: CompositeMixed, Initial: model.Store{1, 0, 1}}, 20076, 41175},
		// A whole-server log: key K outside the scope too, skipped.
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 2, Mode: CompositeMixed, InitialAny: true, WholeServer: true}, 21024, 37492},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeTablesync, WholeServer: true}, 1176, 2001},
		// No-op writes: an update to the key's value, a delete of an absent key.
		{Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: CompositeTablesync, NoOps: true}, 25, 30},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeTablesync, NoOps: true}, 2029, 3460},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 2, Mode: CompositeMixed, NoOps: true}, 3666, 5573},
	}
	for _, tt := range tests {
		t.Run(tt.cfg.String(), func(t *testing.T) {
			distinct, generated := bfCompositeCount(tt.cfg)
			t.Logf("brute force: %d distinct, %d transitions", distinct, generated)
			if distinct != tt.distinct || generated != tt.generated {
				t.Errorf("brute force gives %d/%d, the literal says %d/%d", distinct, generated, tt.distinct, tt.generated)
			}
			r := runComposite(t, tt.cfg, 2)
			if r.Verdict != explore.Pass || r.Stats.Distinct != distinct || r.Stats.Generated != generated {
				t.Errorf("engine: %v, %d distinct, %d generated; brute force: %d, %d", r.Verdict, r.Stats.Distinct, r.Stats.Generated, distinct, generated)
			}
		})
	}
}

// Reference: Figure 3, Prop 2, Example 5.1, Def. 6.2, S-OBS — the shapes the
// invariants must survive are reached, Figure 3's three provenances among
// them.
func TestCompositeSometimes(t *testing.T) {
	for _, cfg := range []Config{compositeSmall(CompositeMixed), compositeSmall(CompositeTablesync), compositeFig3()} {
		t.Run(cfg.String(), func(t *testing.T) {
			r := runComposite(t, cfg, 2)
			if r.Verdict != explore.Pass {
				t.Fatalf("%v: %v", cfg, r.Verdict)
			}
			want := 5 // copy-shares-event-tag among them
			if cfg.Mode == CompositeMixed {
				want += 2 // buffered-row-discarded, shared-witness-below-latest-high
			}
			if cfg.Chunks >= 3 && cfg.Mode == CompositeMixed {
				want++ // three-provenances
			}
			if len(r.Sometimes) != want {
				t.Errorf("%d sometimes-properties, want %d", len(r.Sometimes), want)
			}
			for _, s := range r.Sometimes {
				if !s.Reached {
					t.Errorf("%v: %s not reached", cfg, s.Name)
				}
			}
		})
	}
}

// Reference: Def. 6.2, S-OBS — the survivor and copy properties fire on what
// was emitted, not on the definition: with the copy dropped they are not
// reached (the run itself fails frontier-replay, checked alone elsewhere, so
// here every invariant but the reachability ones is switched off).
func TestCompositeSometimesHonest(t *testing.T) {
	cfg := compositeSmall(CompositeTablesync)
	cfg.Fault = CopyDropped
	r, err := explore.Run(context.Background(), explore.Model[compositeState, compositeAction](newComposite(cfg)),
		explore.Options{Workers: 2, Only: []string{"committed-only"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Sometimes {
		switch s.Name {
		case "survivor-emitted", "copy-decides-frontier":
			if s.Reached {
				t.Errorf("%s reached although no copied row is ever emitted", s.Name)
			}
		}
	}
}

// Reference: Prop 2, S-OBS §6.4, Thm 1 — each fault fails its invariant with
// a shortest counterexample of the length derived by hand.
func TestCompositeFaults(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		breaks string
		steps  int
	}{
		// A claim needs f ⊒ 1: a commit, two splices, one consume, two
		// closes and the claim, 7 steps at least. Prop 2's shape is one of
		// them: splice chunk 1 at 0 (k0=⊥); close it; commit k1 := 1; splice
		// chunk 2 at 1 (k1=1); consume 1; close it; claim c* = 0:
		// sink_0(k1) = 1 ≠ ⊥ (its shape is asserted below).
		{"early-common-onset tablesync", Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeTablesync, Fault: EarlyCommonOnset}, "latest-high-trajectory", 7},
		// The same with chunk 1 a scan: record lo, read and record hi take
		// the place of one splice (9 steps).
		{"early-common-onset mixed", Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeMixed, Fault: EarlyCommonOnset}, "latest-high-trajectory", 9},
		// One scanned key: record lo 0; read k0=⊥; record hi 0; close; commit
		// k0 := 1; the start moves past 1 (bound lo+1): ⊥ ≠ σ_1 = 1.
		{"late-start one unit", Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: CompositeMixed, Fault: LateStart}, "final-replay", 6},
		// A stored row, its copy dropped: splice at 0 reads k0=1; close.
		{"copy-dropped stored row", Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: CompositeTablesync, Fault: CopyDropped, InitialAny: true}, "final-replay", 2},
		// No stored row: commit k0 := 1; the start moves past it; splice at
		// 1 reads k0=1; close emits nothing.
		{"copy-dropped logged row", Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: CompositeTablesync, Fault: CopyDropped}, "final-replay", 4},
		// The chunked scan's copy: record lo 0; read k0=1; record hi 0; close.
		{"copy-dropped scan", Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: CompositeMixed, Fault: CopyDropped, InitialAny: true}, "final-replay", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newComposite(tt.cfg)
			r := runComposite(t, tt.cfg, 2)
			if r.Verdict != explore.Violated || r.Violation.Property != tt.breaks {
				t.Fatalf("%v: want %s violated, got %v\n%s", tt.cfg, tt.breaks, r.Verdict, compositeViolation(m, r))
			}
			if got := len(r.Violation.Trace) - 1; got != tt.steps {
				t.Errorf("trace has %d steps, want %d\n%s", got, tt.steps, compositeViolation(m, r))
			}
			t.Logf("%s", compositeViolation(m, r))
		})
	}
}

// Reference: S-OBS, §6.4 — the late start is a start after the earliest lo
// or splice: the correct consumer never starts beyond it, the late one does.
func TestCompositeStartBound(t *testing.T) {
	for _, fault := range []Fault{None, LateStart} {
		cfg := Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeMixed, InitialAny: true, Fault: fault}
		m := newComposite(cfg)
		seen := map[compositeState]bool{}
		beyond := 0
		var walk func(s compositeState)
		walk = func(s compositeState) {
			if seen[s] {
				return
			}
			seen[s] = true
			if first := EarliestLow(&s.Cap.Plan); first != NoBound && s.Cap.Start > first {
				if s.Cap.Start != first+1 {
					t.Fatalf("%v: start %d, earliest lo/splice %d", fault, s.Cap.Start, first)
				}
				beyond++
			}
			for _, a := range m.Actions(&s, nil) {
				if t2 := s; m.Next(&s, a, &t2) {
					walk(t2)
				}
			}
		}
		for _, s := range m.Init() {
			walk(s)
		}
		if (beyond > 0) != (fault == LateStart) {
			t.Errorf("%v: %d states start after the earliest lo/splice", fault, beyond)
		}
	}
}

// Reference: Def. 6.2, Thm 2, §7.4 A-discard — the buffer the model keeps step
// by step holds, at every close, exactly the unit's survivors (keys read
// present with no event in (lo, hi]), and the close emits each of them tagged
// with the high edge; with copy-dropped it emits none.
func TestCompositeBufferIsSurvivors(t *testing.T) {
	for _, fault := range []Fault{None, CopyDropped} {
		cfg := Config{Keys: 2, Values: 2, Events: 3, Chunks: 2, Txn: 2, Mode: CompositeMixed, Initial: model.Store{1, 2}, Fault: fault}
		m := newComposite(cfg)
		seen := map[compositeState]bool{}
		closes, survivors := 0, 0
		var walk func(s compositeState)
		walk = func(s compositeState) {
			if seen[s] {
				return
			}
			seen[s] = true
			for _, a := range m.Actions(&s, nil) {
				t2 := s
				ok := m.Next(&s, a, &t2)
				if !ok {
					continue
				}
				if a.Kind == compClose {
					u := &s.Cap.Plan.Units[a.Unit]
					if got, want := s.Buf&u.Domain, u.Survivors(&s.Cap.Log); got != want {
						t.Fatalf("close of unit %d: buffer %b, survivors %b\n%+v", a.Unit+1, got, want, s)
					}
					closes++
					for k := model.Key(0); k < model.Key(cfg.Keys); k++ {
						if !u.Survivors(&s.Cap.Log).Has(k) {
							continue
						}
						out := t2.Cap.Out.Val[k] == u.Refresh[k] && t2.Cap.Out.Tag[k] == u.Hi
						if fault == None && !out {
							t.Fatalf("close of unit %d did not emit survivor %v=%v@%d", a.Unit+1, k, u.Refresh[k], u.Hi)
						}
						if fault == CopyDropped && t2.Cap.Out != s.Cap.Out {
							t.Fatalf("close of unit %d emitted with the copy dropped", a.Unit+1)
						}
						survivors++
					}
				}
				walk(t2)
			}
		}
		walk(m.Init()[0])
		if closes == 0 || survivors == 0 {
			t.Errorf("%v: %d closes, %d survivors: nothing checked", fault, closes, survivors)
		}
	}
}

// compositeScript restricts the model's steps (the engine still explores every
// interleaving of what it allows).
type compositeScript struct {
	*composite
	allow func(s *compositeState, a compositeAction) bool
}

func (w compositeScript) Actions(s *compositeState, buf []compositeAction) []compositeAction {
	for _, a := range w.composite.Actions(s, nil) {
		if w.allow(s, a) {
			buf = append(buf, a)
		}
	}
	return buf
}

// Reference: Prop 2 and its proof — over an empty store, L = e1 e2 with
// e1 = (a := 1), e2 = (b := 2); unit A = {a} a point splice at c0 reading
// a = ⊥, unit B = {b} a point splice at c2 reading b = 2; f = c2. For every
// claimed onset c* strictly below f the checker finds the trajectory failing
// at some g with c* ⊑ g ⊑ f, on key b, whose refresh 2 stands at g although
// σ_g(b) = ⊥; and g = c1, the proof's intermediate coordinate, fails for
// every c*.
func TestCompositeProposition2(t *testing.T) {
	a, b := model.Key(0), model.Key(1)
	L := []model.Event{{Key: a, Img: 1}, {Key: b, Img: 2}}
	for cstar := model.Coord(0); cstar < 2; cstar++ {
		t.Run(fmt.Sprintf("c*=c%d", cstar), func(t *testing.T) {
			cfg := Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeTablesync, Fault: EarlyCommonOnset}
			m := newComposite(cfg)
			w := compositeScript{m, func(s *compositeState, x compositeAction) bool {
				n := s.Cap.Log.Len()
				switch x.Kind {
				case compCommit:
					return x.Txn.N == 1 && x.Txn.Ev[0] == L[n]
				case compSplice:
					return x.Unit == 0 && n == 0 || x.Unit == 1 && n == 2
				case compStartLater:
					return false
				case compClaim:
					return x.At == cstar
				}
				return true
			}}
			r := runCompositeModel(t, w, explore.Options{Workers: 2, NoDeadlock: true})
			if r.Verdict != explore.Violated || r.Violation.Property != "latest-high-trajectory" {
				t.Fatalf("want latest-high-trajectory violated, got %v", r.Verdict)
			}
			text := compositeViolation(m, r)
			t.Logf("%s", text)

			// The decisive steps, in the proof's order.
			var lines []string
			for i, st := range r.Violation.Trace {
				if st.HasAction {
					lines = append(lines, m.Describe(&r.Violation.Trace[i-1].State, st.Action))
				}
			}
			order := []string{
				"splice chunk 1 (per-table dump) {k0} at recorded r = 0: k0=⊥",
				"source commits k0 := 1 at position 1",
				"source commits k1 := 2 at position 2",
				"splice chunk 2 (per-table dump) {k1} at recorded r = 2: k1=2",
				fmt.Sprintf("claim the trajectory from an early common onset c* = %d (frontier 2, latest high 2)", cstar),
			}
			at := -1
			for _, want := range order {
				i := at + 1
				for i < len(lines) && lines[i] != want {
					i++
				}
				if i == len(lines) {
					t.Fatalf("step %q missing or out of order in\n%s", want, text)
				}
				at = i
			}
			if at != len(lines)-1 {
				t.Errorf("the claim is not the last step:\n%s", text)
			}

			// The failure: g in [c*, f], key b, sink 2, σ_g(b) = ⊥.
			last := r.Violation.Trace[len(r.Violation.Trace)-1].State
			c := &last.Cap
			p := c.FinalPlan()
			f := c.Pos
			g, k, ok := p.Trajectory(&c.Log, cstar, f)
			if ok || g < cstar || g > f || k != b || p.Sink(&c.Log, g, b) != 2 || c.Log.Sigma(g, b) != model.Absent {
				t.Errorf("trajectory from c%d fails at g = %d key %v (ok=%v), want c%d ⊑ g ⊑ c%d on %v with sink 2, σ ⊥", cstar, g, k, ok, cstar, f, b)
			}
			if want := fmt.Sprintf("trajectory claimed from %d: at g = %d key k1 has sink 2, expected σ_%d = ⊥", cstar, g, g); r.Violation.Reason != want {
				t.Errorf("reason %q, want %q", r.Violation.Reason, want)
			}
			// The proof's witness g = c1 fails whatever c* was.
			if g1, k1, ok := p.Trajectory(&c.Log, 1, 1); ok || g1 != 1 || k1 != b {
				t.Errorf("trajectory at c1: g = %d key %v ok = %v, want a failure on %v", g1, k1, ok, b)
			}
			// The instance: A = [c0, c0] reading a = ⊥, B = [c2, c2] reading b = 2,
			// no shared witness, each one-unit plan witnessed by its own point,
			// and Lemma 4.2's trajectory from the latest high holds.
			ua, ub := &p.Units[0], &p.Units[1]
			if f != 2 || ua.Lo != 0 || ua.Hi != 0 || ua.Refresh[a] != model.Absent || ub.Lo != 2 || ub.Hi != 2 || ub.Refresh[b] != 2 {
				t.Errorf("plan %+v at f = %d is not the proof's instance", p.Units[:2], f)
			}
			if w := p.SharedWitnesses(&c.Log); w != 0 {
				t.Errorf("shared witnesses %b, want none", w)
			}
			for i, want := range []model.Coord{0, 2} {
				var one model.Plan
				one.Keys = p.Keys
				one.Add(p.Units[i])
				if ws := one.SharedWitnesses(&c.Log); !ws.Has(want) {
					t.Errorf("unit %d alone is not witnessed at c%d (witnesses %b)", i+1, want, ws)
				}
			}
			if _, _, ok := p.Trajectory(&c.Log, p.LatestHigh(), f); !ok {
				t.Error("trajectory from the latest high edge fails")
			}
		})
	}
}

// Reference: Prop 2 — over every history, an onset claimed at the earliest
// splice (each unit witnessed by its own point, so only composition can make
// the claim fail) is refuted by two point splices at distinct coordinates
// with no shared witness, the failing key owned by the later splice.
func TestCompositeProposition2Shape(t *testing.T) {
	cfg := Config{Keys: 2, Values: 2, Events: 3, Chunks: 2, Txn: 1, Mode: CompositeTablesync, Fault: EarlyCommonOnset}
	w := compositeScript{newComposite(cfg), func(s *compositeState, x compositeAction) bool {
		return x.Kind != compClaim || x.At == EarliestLow(&s.Cap.Plan)
	}}
	r := runCompositeModel(t, w, explore.Options{Workers: 2, NoDeadlock: true})
	if r.Verdict != explore.Violated || r.Violation.Property != "latest-high-trajectory" {
		t.Fatalf("want latest-high-trajectory violated, got %v", r.Verdict)
	}
	last := r.Violation.Trace[len(r.Violation.Trace)-1].State
	c := &last.Cap
	p := c.FinalPlan()
	r0, r1 := p.Units[0].Lo, p.Units[1].Lo
	lo, hi := min(r0, r1), max(r0, r1)
	if lo == hi || p.SharedWitnesses(&c.Log) != 0 {
		t.Fatalf("splices at %d and %d, shared witnesses %b", r0, r1, p.SharedWitnesses(&c.Log))
	}
	cstar := last.Onset - 1
	g, k, ok := p.Trajectory(&c.Log, cstar, c.Pos)
	if ok || g < cstar || g >= hi || p.Units[p.Owner(k)].Lo != hi {
		t.Errorf("claimed c* = %d fails at g = %d key %v (ok=%v), want g below the later splice %d on its key", cstar, g, k, ok, hi)
	}
}

// Reference: §10 — states survive the spilled queue: Decode inverts Encode.
func TestCompositeEncodeDecode(t *testing.T) {
	for _, cfg := range []Config{compositeSmall(CompositeMixed), compositeSmall(CompositeTablesync),
		{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeTablesync, Fault: EarlyCommonOnset}} {
		m := newComposite(cfg)
		seen := 0
		var walk func(s compositeState, depth int)
		walk = func(s compositeState, depth int) {
			enc := m.Encode(&s, nil)
			var back compositeState
			err := m.Decode(enc, &back)
			want := s
			want.Cap.Dup, want.Cap.Inexact = 0, 0 // marks of the step, not part of the state
			if err != nil || string(m.Encode(&back, nil)) != string(enc) || back != want {
				t.Fatalf("%v: round trip of %x failed: %v", cfg, enc, err)
			}
			if err := m.Decode(enc[:len(enc)-1], new(compositeState)); err == nil {
				t.Fatalf("%v: short input accepted", cfg)
			}
			seen++
			if depth == 0 {
				return
			}
			for _, a := range m.Actions(&s, nil) {
				if t2 := s; m.Next(&s, a, &t2) {
					walk(t2, depth-1)
				}
			}
		}
		walk(m.Init()[len(m.Init())-1], 6)
		if seen < 100 {
			t.Errorf("%v: only %d states walked", cfg, seen)
		}
	}
}

// Reference: §3.1 — the plan lists units in chunk order whatever order they
// were recorded in, and closed flags and buffered rows move with their units.
func TestCompositeUnitOrder(t *testing.T) {
	m := newComposite(Config{Keys: 3, Values: 1, Events: 2, Chunks: 3, Txn: 1, Mode: CompositeTablesync, Initial: model.Store{1, 1, 1}})
	s := m.Init()[0]
	m.splice(&s, 2)
	m.closeUnit(&s, 0) // chunk 3 closes at 0
	m.splice(&s, 0)
	m.splice(&s, 1)
	c := &s.Cap
	for i := 0; i < 3; i++ {
		if int(s.Chunk[i]) != i || c.Plan.Units[i].Domain != model.Range(model.Key(i), model.Key(i+1)) {
			t.Fatalf("unit %d holds chunk %d, domain %b", i, s.Chunk[i], c.Plan.Units[i].Domain)
		}
	}
	if c.Closed != 1<<2 {
		t.Errorf("closed = %b, want only chunk 3's unit (bit 2)", c.Closed)
	}
	if s.Buf != model.Range(0, 2) {
		t.Errorf("buffer %b, want k0 and k1 (chunk 3's row went out at its close)", s.Buf)
	}
}

func compositeViolation(m *composite, r *explore.Result[compositeState, compositeAction]) string {
	if r.Violation == nil {
		return ""
	}
	var b strings.Builder
	for i, st := range r.Violation.Trace {
		if st.HasAction {
			b.WriteString(m.Describe(&r.Violation.Trace[i-1].State, st.Action) + "\n")
		}
	}
	b.WriteString(r.Violation.Property + ": " + r.Violation.Reason)
	return b.String()
}

// ---- An independent enumerator of the composite protocol (§4.6, §6.2, §6.4). ----

// bfComp is a state as the paper describes it: the base store and the log
// (with transaction labels); per chunk whether it is recorded, its bracket
// (lo, hi], where its keys were read (latent) and whether it has closed; the
// chunked unit's progress; the consumption start s0 and the consumer's
// position; and the replay of what was emitted with each key's last tag.
type bfComp struct {
	b0            [8]int8
	n             int
	key, img, txn [8]int8
	rec           [4]bool
	lo, hi, rd    [4]int // rd: where a point splice read its keys
	rk            [8]int // chunk 1 (mixed): where each of its keys was read
	nread         int    // chunk 1 (mixed): keys read so far, in key order
	closed        [4]bool
	scan          int // chunk 1 in mode mixed: 0 idle, 1 lo, 2 read, 3 hi
	s0, pos       int
	val, tag      [8]int
}

func (s *bfComp) sigma(c, k int) int {
	v := int(s.b0[k])
	for p := 0; p < c; p++ {
		if int(s.key[p]) == k {
			v = int(s.img[p])
		}
	}
	return v
}

func (s *bfComp) touched(k, lo, hi int) bool {
	for p := lo + 1; p <= hi; p++ {
		if int(s.key[p-1]) == k {
			return true
		}
	}
	return false
}

// bfCompositeCount returns the distinct reachable states and the transitions
// taken from them (no fault).
func bfCompositeCount(cfg Config) (distinct, transitions uint64) {
	mixed := cfg.Mode != CompositeTablesync
	owner := func(ch, k int) bool { return ch*cfg.Keys/cfg.Chunks <= k && k < (ch+1)*cfg.Keys/cfg.Chunks }
	scanned := func(ch int) bool { return mixed && ch == 0 }
	complete := func(s *bfComp, ch int) bool { return s.rec[ch] && (!scanned(ch) || s.scan == 3) }
	seen := map[bfComp]bool{}
	var visit func(s bfComp)
	visit = func(s bfComp) {
		if seen[s] {
			return
		}
		seen[s] = true
		var next []bfComp
		// The source: a transaction of 1..T rows on distinct keys in any
		// order, each changing its key (with no-op writes any value), within
		// E rows.
		src := cfg.Keys // the keys the source writes: with a whole-server log key K too (§7.7)
		if cfg.WholeServer {
			src++
		}
		var txn func(t bfComp, used int, size int)
		txn = func(t bfComp, used int, size int) {
			for k := 0; k < src; k++ {
				if used&(1<<k) != 0 {
					continue
				}
				for v := 0; v <= cfg.Values; v++ {
					if v == t.sigma(t.n, k) && !cfg.NoOps { // with no-op writes any value
						continue
					}
					u := t
					u.key[u.n], u.img[u.n] = int8(k), int8(v)
					u.txn[u.n] = 1
					if u.n > 0 {
						u.txn[u.n] = t.txn[0] // placeholder, fixed below
					}
					u.n++
					next = append(next, u)
					if size+1 < cfg.Txn && u.n < cfg.Events {
						txn(u, used|1<<k, size+1)
					}
				}
			}
		}
		if s.n < cfg.Events {
			from := len(next)
			txn(s, 0, 0)
			label := int8(1)
			if s.n > 0 {
				label = s.txn[s.n-1] + 1
			}
			for i := from; i < len(next); i++ {
				for p := s.n; p < next[i].n; p++ {
					next[i].txn[p] = label
				}
			}
		}
		// Record each chunk not yet recorded: chunk 1's low edge (mixed), or a
		// point splice read at its recorded coordinate.
		for ch := 0; ch < cfg.Chunks; ch++ {
			if s.rec[ch] {
				continue
			}
			t := s
			t.rec[ch], t.lo[ch] = true, s.n
			if scanned(ch) {
				t.scan = 1
			} else {
				t.hi[ch], t.rd[ch] = s.n, s.n
			}
			next = append(next, t)
		}
		if s.scan == 1 { // read chunk 1's next key at any boundary in [lo, n]
			var keys []int
			for k := 0; k < cfg.Keys; k++ {
				if owner(0, k) {
					keys = append(keys, k)
				}
			}
			for c := s.lo[0]; c <= s.n; c++ {
				if c != 0 && c != s.n && s.txn[c-1] == s.txn[c] {
					continue // inside a transaction
				}
				t := s
				t.rk[keys[s.nread]] = c
				t.nread++
				if t.nread == len(keys) {
					t.scan = 2
				}
				next = append(next, t)
			}
		}
		if s.scan == 2 { // record chunk 1's high edge
			t := s
			t.scan, t.hi[0] = 3, s.n
			next = append(next, t)
		}
		// A unit closes once the consumer has reached its high edge: its keys
		// read present with no event in (lo, hi] (Def. 6.2), tagged hi.
		due := false
		for ch := 0; ch < cfg.Chunks; ch++ {
			if !complete(&s, ch) || s.closed[ch] || s.pos < s.hi[ch] {
				continue
			}
			due = true
			t := s
			for k := 0; k < cfg.Keys; k++ {
				at := s.rd[ch]
				if scanned(ch) {
					at = s.rk[k]
				}
				if r := s.sigma(at, k); owner(ch, k) && r != 0 && !s.touched(k, s.lo[ch], s.hi[ch]) {
					t.val[k], t.tag[k] = r, s.hi[ch]
				}
			}
			t.closed[ch] = true
			next = append(next, t)
		}
		// The consumer takes the next position unless a unit is due to close
		// or it stands at the low edge of a chunk not yet read; while it has
		// taken nothing it may instead move its start on, up to the earliest
		// recorded lo or splice (§6.4).
		waiting := mixed && s.scan == 1 && s.pos >= s.lo[0]
		if s.pos < s.n && !due && !waiting {
			t := s
			t.pos++
			if k := t.key[t.pos-1]; int(k) < cfg.Keys { // another table's row is skipped
				t.val[k], t.tag[k] = int(t.img[t.pos-1]), t.pos
			}
			next = append(next, t)
			bound := 1 << 10
			for ch := 0; ch < cfg.Chunks; ch++ {
				if s.rec[ch] {
					bound = min(bound, s.lo[ch])
				}
			}
			if s.pos == s.s0 && s.pos < bound {
				t := s
				t.s0++
				t.pos++
				next = append(next, t)
			}
		}
		transitions += uint64(len(next))
		for _, t := range next {
			visit(t)
		}
	}
	var stores [][8]int8
	stores = append(stores, [8]int8{})
	if cfg.InitialAny {
		for k := 0; k < cfg.Keys; k++ {
			var more [][8]int8
			for _, st := range stores {
				for v := 1; v <= cfg.Values; v++ {
					st2 := st
					st2[k] = int8(v)
					more = append(more, st2)
				}
			}
			stores = append(stores, more...)
		}
	} else {
		for k := 0; k < cfg.Keys; k++ {
			stores[0][k] = int8(cfg.Initial[k])
		}
	}
	for _, b0 := range stores {
		visit(bfComp{b0: b0})
	}
	return uint64(len(seen)), transitions
}

// Reference: Cor 1, T3, Example 5.1 — in mixed mode a shared state witness
// strictly below the latest high is reachable, and from every one the
// canonical trajectory is the source's (the property holds); a capture that
// exhibits every in-bracket coordinate as a witness, refreshes unchecked
// (witness-by-bracket-only), fails it: the chunked scan read k0 = 1 at 1, and
// 0 lies in both brackets, but σ_0(k0) = ⊥.
func TestCompositeSharedWitness(t *testing.T) {
	cfg := Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeMixed}
	r := runComposite(t, cfg, 2)
	if r.Verdict != explore.Pass {
		t.Fatalf("lawful: %v", r.Verdict)
	}
	for _, s := range r.Sometimes {
		if s.Name == "shared-witness-below-latest-high" && !s.Reached {
			t.Error("no shared witness below the latest high")
		}
	}
	cfg.Fault = WitnessByBracketOnly
	r, err := explore.Run(context.Background(), explore.Model[compositeState, compositeAction](newComposite(cfg)),
		explore.Options{Workers: 2, Only: []string{invariants.SharedWitness.Name}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != explore.Violated || r.Violation.Property != invariants.SharedWitness.Name {
		t.Fatalf("witness-by-bracket-only: %v, want %s violated", r.Verdict, invariants.SharedWitness.Name)
	}
	c := &r.Violation.Trace[len(r.Violation.Trace)-1].State.Cap
	if c.Plan.SharedWitnesses(&c.Log) == newComposite(cfg).exhibited(c) {
		t.Error("the exhibited witnesses are the real ones, yet the property failed")
	}
	// The other invariants hold along the way: only this property sees it.
	cfg.Fault = None
	lawful := newComposite(cfg)
	for _, st := range r.Violation.Trace {
		s := st.State
		for _, p := range lawful.Properties() {
			if p.Check != nil && p.Kind == explore.Always && !p.OptIn {
				if why := p.Check(&s); why != "" {
					t.Errorf("%s fails on the trace: %s", p.Name, why)
				}
			}
		}
	}
}

// Reference: §7.4 A-discard, O2 per key — with the consumer held at lo until
// the chunked scan's read completes, every window event meets the filled
// buffer; let it run on (consumer-runs-during-read) and a read may reflect a
// state before a delete the consumer has already processed. By hand, 8 steps:
// record lo at 0, commit k0 := 1 and k0 := ⊥, consume both, read k0 = 1 at
// coordinate 1, record hi at 2, close emitting k0 = 1 over the delete. Only a
// stale read shows it: a read at the log end sees the delete.
func TestCompositeConsumerRunsDuringRead(t *testing.T) {
	cfg := Config{Keys: 1, Values: 1, Events: 2, Chunks: 1, Txn: 1, Mode: CompositeMixed}
	if r := runComposite(t, cfg, 2); r.Verdict != explore.Pass {
		t.Fatalf("held consumer: %v", r.Verdict)
	}
	cfg.Fault = ConsumerRunsDuringRead
	r, err := explore.Run(context.Background(), explore.Model[compositeState, compositeAction](newComposite(cfg)),
		explore.Options{Workers: 2, Only: []string{invariants.FrontierReplay.Name}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != explore.Violated || len(r.Violation.Trace)-1 != 8 {
		t.Fatalf("want frontier-replay in 8 steps, got %v", r.Verdict)
	}
	last := &r.Violation.Trace[len(r.Violation.Trace)-1].State.Cap
	if last.ReadAt[0] >= last.Log.Len() || last.Out.Val[0] != 1 || last.Log.Sigma(last.Pos, 0) != model.Absent {
		t.Errorf("not a stale read released over the delete: read at %d of %d, replay %v", last.ReadAt[0], last.Log.Len(), last.Out.Val[0])
	}
}
