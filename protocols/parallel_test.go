package protocols

import (
	"context"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

func runParallel(t *testing.T, m explore.Model[parallelState, parallelAction], workers int) *explore.Result[parallelState, parallelAction] {
	t.Helper()
	r, err := explore.Run(context.Background(), m, explore.Options{Workers: workers})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return r
}

// parallelOnly checks a single named property of the model: the shortest
// trace that breaks that one claim, whatever else breaks on the way.
type parallelOnly struct {
	*parallel
	prop string
}

func (m parallelOnly) Properties() []explore.Property[parallelState, parallelAction] {
	var out []explore.Property[parallelState, parallelAction]
	for _, p := range m.parallel.Properties() {
		if p.Name == m.prop {
			out = append(out, p)
		}
	}
	return out
}

// parallelReach checks only the model's sometimes-properties.
type parallelReach struct{ *parallel }

func (m parallelReach) Properties() []explore.Property[parallelState, parallelAction] {
	var out []explore.Property[parallelState, parallelAction]
	for _, p := range m.parallel.Properties() {
		if p.Kind == explore.Sometimes {
			out = append(out, p)
		}
	}
	return out
}

// Reference: §7.5 Prop 5, §6.3 Thm 4, Thm 5, Lemma 6.3, Def. 6.4 — every
// invariant holds, and the engine finds exactly the states an independent
// enumeration finds.
func TestParallelPasses(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want uint64 // distinct states, from enumerateParallel; literal for the record
	}{
		// By hand: the log is [] or [k0=1], n its length. Idle: 2 states
		// (n = 0, 1). Low recorded, nothing read, lo ≤ n: 3. Read at ra,
		// lo ≤ ra ≤ n: 4. High, lo ≤ ra ≤ hi ≤ n: 5. Closed: the reader's
		// start s0 ≤ hi and its position s0 ≤ pos ≤ n — hi = n = 0: 1;
		// hi = 0, n = 1: pos 0 or 1, 2; hi = n = 1: (lo, ra) in 3 ways times
		// (s0, pos) in {(0,0), (0,1), (1,1)}, 9. Total 2+3+4+5+12 = 26.
		{"k1 v1 e1 c1", Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, 26},
		{"k1 v2 e2 c1 any", Config{Keys: 1, Values: 2, Events: 2, Chunks: 1, Txn: 1, InitialAny: true}, 1029},
		{"k2 v1 e2 c2", Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1}, 5659},
		{"k2 v2 e2 c2", Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1}, 21677},
		// Two keys in one chunk: a key read after another may reflect an
		// earlier coordinate (798; 620 with reads at the log end).
		{"k2 v1 e2 c1 t2", Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 2}, 798},
		{"k2 v1 e2 c2 t2 any", Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 2, InitialAny: true}, 24676},
		// The same count by symmetry: the log is [] or [k0=⊥], and the base
		// row reaches the sink only through the merged unit.
		{"k1 v1 e1 c1 b0={k0=1}", Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Initial: model.Store{1}}, 26},
		// With no-op writes the log may also be [y], y = k0 := ⊥ (a delete
		// of the absent key); with a whole-server log y = k1 := 1, outside
		// the scope (§7.7). A state is still fixed by its log and the
		// offsets above, so each of the 21 states over [x] has one twin
		// over [y], and the 5 over [] are shared: 5 + 2·21 = 47.
		{"k1 v1 e1 c1 noops", Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, NoOps: true}, 47},
		{"k1 v1 e1 c1 whole-server", Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, WholeServer: true}, 47},
		{"k2 v1 e2 c1 t2 noops", Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 2, NoOps: true}, 3038},
		{"k2 v1 e2 c1 t2 whole-server", Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 2, WholeServer: true}, 1812},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			brute := enumerateParallel(tt.cfg)
			if brute != tt.want {
				t.Errorf("enumeration: %d distinct states, the literal says %d", brute, tt.want)
			}
			var first *explore.Result[parallelState, parallelAction]
			for _, w := range []int{1, 2} {
				r := runParallel(t, newParallel(tt.cfg, ParallelParts{}), w)
				if r.Verdict != explore.Pass {
					t.Fatalf("workers=%d: verdict %v: %s", w, r.Verdict, describeViolation(newParallel(tt.cfg, ParallelParts{}), r))
				}
				if r.Stats.Distinct != brute {
					t.Errorf("workers=%d: engine found %d distinct states, enumeration %d", w, r.Stats.Distinct, brute)
				}
				if first == nil {
					first = r
				} else if r.Stats.Distinct != first.Stats.Distinct || r.Stats.Generated != first.Stats.Generated || r.Stats.Depth != first.Stats.Depth {
					t.Errorf("workers=%d: %+v, workers=1: %+v", w, r.Stats, first.Stats)
				}
			}
		})
	}
}

// Reference: §6.3, §7.5 — every race the invariants are about happens, and
// every action is taken.
func TestParallelSometimes(t *testing.T) {
	// Three keys, so chunk 2 owns two and a read can be stale (stale-read).
	cfg := Config{Keys: 3, Values: 2, Events: 2, Chunks: 2, Txn: 2}
	r := runParallel(t, newParallel(cfg, ParallelParts{}), 2)
	if r.Verdict != explore.Pass {
		t.Fatalf("verdict %v: %s", r.Verdict, describeViolation(newParallel(cfg, ParallelParts{}), r))
	}
	for _, s := range r.Sometimes {
		if !s.Reached {
			t.Errorf("%s (%s) not reached at %v", s.Name, s.Cite, cfg)
		}
	}
	for _, c := range r.Coverage {
		if c.Count == 0 {
			t.Errorf("action %s never taken", c.Name)
		}
	}
}

// Reference: Def. 6.4, Thm 4 — the properties about the merged unit fire
// only when its entry really reached the sink: with copy-dropped the close
// emits nothing, so they stay unreached, while the delete race (whose merged
// result is emitted zero times anyway) is still seen.
func TestParallelSometimesNeedEmission(t *testing.T) {
	cfg := Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 2, InitialAny: true, Fault: CopyDropped}
	r := runParallel(t, parallelReach{newParallel(cfg, ParallelParts{})}, 2)
	if r.Verdict != explore.Pass {
		t.Fatalf("verdict %v", r.Verdict)
	}
	want := map[string]bool{
		"merge-changes-value": false, "absent-read-inserted-in-window": false, "stale-read-corrected": false,
		"copy-decides-frontier": false, "delete-races-read": true, "brackets-overlap": true,
		"live-event-withheld": true, "pre-low-event-withheld": true,
		"stale-read": false, // one key per chunk: no read follows another
	}
	for _, s := range r.Sometimes {
		if w, ok := want[s.Name]; !ok || s.Reached != w {
			t.Errorf("%s: reached %v under copy-dropped, want %v", s.Name, s.Reached, w)
		}
	}
}

// Reference: §4.3, §7.5 A-read, O2 — a chunk's select returns each key as it
// stood at any transaction boundary of the bracket, so a key read after
// another may reflect an earlier state (stale-read). Backfilling each key only
// from where its select returned is then wrong (backfill-from-read), and only
// a stale read shows it: with every read at the log end the same mistake
// passes, and stale-read is never reached.
func TestParallelStaleRead(t *testing.T) {
	cfg := Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 1}
	fresh := ParallelParts{Read: func(l model.Log, lo, c model.Coord) bool { return c == l.Len() }}
	reached := func(r *explore.Result[parallelState, parallelAction]) bool {
		for _, s := range r.Sometimes {
			if s.Name == "stale-read" {
				return s.Reached
			}
		}
		t.Fatal("no stale-read property")
		return false
	}
	if r := runParallel(t, newParallel(cfg, ParallelParts{}), 2); r.Verdict != explore.Pass || !reached(r) {
		t.Errorf("published: %v, stale-read reached %v; want pass, reached", r.Verdict, reached(r))
	}
	if r := runParallel(t, newParallel(cfg, fresh), 2); r.Verdict != explore.Pass || reached(r) {
		t.Errorf("fresh reads: %v, stale-read reached %v; want pass, unreached", r.Verdict, reached(r))
	}
	faulty := cfg
	faulty.Fault = BackfillFromRead
	m := newParallel(faulty, ParallelParts{})
	r := runParallel(t, parallelOnly{m, "frontier-replay"}, 2)
	if r.Verdict != explore.Violated {
		t.Fatalf("backfill-from-read: %v, want frontier-replay violated", r.Verdict)
	}
	// The lost event lies between the stale read's coordinate and the
	// position its select returned at.
	last := &r.Violation.Trace[len(r.Violation.Trace)-1].State
	lost := false
	for k := model.Key(0); k < 2; k++ {
		if last.Cap.Plan.Units[0].Read.Has(k) && last.Cap.Log.Touches(k, model.Window{Lo: last.Cap.ReadAt[k], Hi: last.ReadEnd[k]}) {
			lost = true
		}
	}
	if !lost {
		t.Errorf("no event between a read's coordinate and its return:\n%s", describeViolation(m, r))
	}
	if r := runParallel(t, newParallel(faulty, fresh), 2); r.Verdict != explore.Pass {
		t.Errorf("backfill-from-read with fresh reads: %v, want pass (the mistake needs a stale read)\n%s", r.Verdict, describeViolation(newParallel(faulty, fresh), r))
	}
}

// Reference: Def. 6.4 (s0 ⊑ hi_i for every unit), §6.3, §7.5 A-handoff. The
// live reader's start ranges over every position from 0 to the minimum high
// offset and never beyond; it moves only before the reader consumes anything
// and only once every chunk has closed.
func TestParallelStartRule(t *testing.T) {
	m := newParallel(Config{Keys: 2, Values: 1, Events: 3, Chunks: 2, Txn: 2, InitialAny: true}, ParallelParts{})
	starts := map[[2]model.Coord]bool{} // (s0, min hi) pairs seen with the reader done
	seen := map[string]bool{}
	queue := m.Init()
	var buf []parallelAction
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		enc := string(m.Encode(&s, nil))
		if seen[enc] {
			continue
		}
		seen[enc] = true
		c := &s.Cap
		if !c.AllClosed(m.cfg.Chunks) && (c.Start != 0 || c.Pos != 0) {
			t.Fatalf("reader moved before every chunk closed: s0 = %d, pos = %d", c.Start, c.Pos)
		}
		if c.AllClosed(m.cfg.Chunks) {
			h := MinHigh(&c.Plan)
			if c.Start > h {
				t.Fatalf("s0 = %d beyond the minimum high %d", c.Start, h)
			}
			if c.Pos == c.Log.Len() {
				starts[[2]model.Coord{c.Start, h}] = true
			}
		}
		buf = m.Actions(&s, buf[:0])
		for _, a := range buf {
			if a.Kind == parallelStartLater && c.Pos != c.Start {
				t.Fatalf("start-later offered after the reader consumed position %d", c.Pos)
			}
			if next := s; m.Next(&s, a, &next) {
				queue = append(queue, next)
			}
		}
	}
	for h := model.Coord(0); h <= 3; h++ {
		for s0 := model.Coord(0); s0 <= h; s0++ {
			if !starts[[2]model.Coord{s0, h}] {
				t.Errorf("no finished run starts at s0 = %d with minimum high %d", s0, h)
			}
		}
	}
}

// Reference: §10 mutated runs; §6.3 Prop 3; §7.5 A-edge, A-read, A-handoff.
func TestParallelFaults(t *testing.T) {
	tests := []struct {
		fault Fault
		cfg   Config
		first string // the property the full run reports first
		steps int    // length of its shortest trace (actions)
		// breaks is the invariant the fault is meant to break, and the length
		// of its own shortest trace when it is checked alone.
		breaks string
		bSteps int
	}{
		// Prop 3 (TestParallelProposition3): the reader, started before the
		// low edge, streams the insert the window's delete absorbed. The
		// closed chunk's key is wrong as soon as the insert is emitted; the
		// frontier one step later, when the delete is withheld.
		{WindowOnlyWithholding, Config{Keys: 1, Values: 1, Events: 2, Chunks: 1, Txn: 1}, "closed-unit-cut", 7, "frontier-replay", 8},
		// k0 := 1 right after the high edge is dropped by the gate: the sink
		// is wrong at rest, so final-replay (listed first) is reported.
		{GateDropsBoundary, Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, "final-replay", 6, "frontier-replay", 6},
		// One chunk's gate is the minimum, so two are needed: k1 inserted in
		// chunk 2's window (0, 2] is merged, tagged 2, and passed again by
		// a gate at chunk 1's high 0, tagged 1.
		{GateRepeatsWindow, Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1}, "per-key-monotonicity", 11, "per-key-monotonicity", 11},
		// k0 read ⊥, inserted in the window: the raw read loses the insert.
		// The chunk's key is wrong at its close; the frontier once the
		// reader has passed the high edge.
		{SkippedBackfill, Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, "closed-unit-cut", 5, "frontier-replay", 6},
		// The only present row is dropped by the scan; the insert before
		// the low edge is withheld.
		{ScanSkipsRow, Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, "closed-unit-cut", 5, "frontier-replay", 6},
		// The split assigner's plan already breaks O1 in the initial state.
		{OverlappingChunks, Config{Keys: 2, Values: 1, Events: 1, Chunks: 2, Txn: 1}, "contract", 0, "contract", 0},
		// The window's only event, at lo+1, is not backfilled.
		{LowEdgeOffByOne, Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, "closed-unit-cut", 5, "frontier-replay", 6},
		// The window's only event, at hi, is not backfilled.
		{HighEdgeOffByOne, Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, "closed-unit-cut", 5, "frontier-replay", 6},
		// k0 is read after the high offset and after k0 := 1: the merged
		// entry is ahead of the frontier, and O2 fails at the same close
		// (frontier-replay is listed first, so it is reported).
		{HighBeforeRead, Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, "frontier-replay", 5, "contract", 5},
		// k0 inserted in the window: the close emits nothing, the reader
		// withholds the insert. With the base store k0 = 1 and no event the
		// frontier is wrong at the close itself (TestParallelCopyDropped).
		{CopyDropped, Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, "closed-unit-cut", 5, "frontier-replay", 6},
	}
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			cfg := tt.cfg
			cfg.Fault = tt.fault
			r := runParallel(t, newParallel(cfg, ParallelParts{}), 2)
			if r.Verdict != explore.Violated || r.Violation.Property != tt.first || len(r.Violation.Trace)-1 != tt.steps {
				t.Fatalf("want %s in %d steps; got %v %s", tt.first, tt.steps, r.Verdict, describeViolation(newParallel(cfg, ParallelParts{}), r))
			}
			if tt.breaks == tt.first {
				if tt.bSteps != tt.steps {
					t.Fatalf("table: %s is reported first, so its own trace is the same %d steps", tt.first, tt.steps)
				}
				return
			}
			r = runParallel(t, parallelOnly{newParallel(cfg, ParallelParts{}), tt.breaks}, 2)
			if r.Verdict != explore.Violated || r.Violation.Property != tt.breaks || len(r.Violation.Trace)-1 != tt.bSteps {
				t.Fatalf("%s alone: want a violation in %d steps; got %v %s", tt.breaks, tt.bSteps, r.Verdict, describeViolation(newParallel(cfg, ParallelParts{}), r))
			}
		})
	}
}

// Reference: Thm 1, Thm 4, S-OBS — a capture whose close emits no merged
// rows fails frontier replay wherever a row predates the reader's view: with
// every base store, at the first close, before any event exists.
func TestParallelCopyDropped(t *testing.T) {
	cfg := Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, InitialAny: true, Fault: CopyDropped}
	m := newParallel(cfg, ParallelParts{})
	r := runParallel(t, parallelOnly{m, "frontier-replay"}, 2)
	if r.Verdict != explore.Violated || len(r.Violation.Trace)-1 != 4 {
		t.Fatalf("want frontier-replay in 4 steps; got %v %s", r.Verdict, describeViolation(m, r))
	}
	c := &r.Violation.Trace[len(r.Violation.Trace)-1].State.Cap
	if c.Log.Init[0] == model.Absent || c.Log.Len() != 0 || c.Out.Val[0] != model.Absent {
		t.Errorf("want the base row k0 lost with an empty log; got b0 %v, log %d, replay %v", c.Log.Init[0], c.Log.Len(), c.Out.Val[0])
	}
	cfg.Fault = None
	if r := runParallel(t, newParallel(cfg, ParallelParts{}), 2); r.Verdict != explore.Pass {
		t.Errorf("lawful close: %v %s", r.Verdict, describeViolation(newParallel(cfg, ParallelParts{}), r))
	}
}

// Reference: §6.3 Proposition 3 (withholding is necessary), §7.5 A-handoff.
// The paper's instance: one key a, L = insert then delete, one unit bracket
// (c1, c2], R(a) read present at c1, consumption from s0 = c0. The narrowed
// gate streams the pre-bracket insert, the merged block absorbs the
// in-window delete and emits nothing, and a replays to the deleted value.
// It is the shortest counterexample of `check parallel --keys 1 --events 2
// --chunks 1 --mutation window-only-withholding` (the protocol's V = 2: any
// present value stands for the paper's 5).
func TestParallelProposition3(t *testing.T) {
	cfg := Config{Keys: 1, Values: 2, Events: 2, Chunks: 1, Txn: 1, Fault: WindowOnlyWithholding}
	m := newParallel(cfg, ParallelParts{})
	for _, tc := range []struct {
		name string
		m    explore.Model[parallelState, parallelAction]
		prop string
		kind []parallelKind // the decisive steps, in order
	}{
		// The closed chunk's key is already wrong when the insert is
		// emitted: replay present, σ at the high edge absent.
		{"all invariants", m, "closed-unit-cut", []parallelKind{parallelCommit, parallelLow, parallelRead, parallelCommit, parallelHigh, parallelClose, parallelConsume}},
		// At the frontier, once the reader has withheld the delete.
		{"frontier-replay", parallelOnly{m, "frontier-replay"}, "frontier-replay", []parallelKind{parallelCommit, parallelLow, parallelRead, parallelCommit, parallelHigh, parallelClose, parallelConsume, parallelConsume}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runParallel(t, tc.m, 2)
			if r.Verdict != explore.Violated || r.Violation.Property != tc.prop {
				t.Fatalf("want %s violated; got %v %s", tc.prop, r.Verdict, describeViolation(m, r))
			}
			tr := r.Violation.Trace
			var kinds []parallelKind
			for _, st := range tr[1:] {
				kinds = append(kinds, st.Action.Kind)
			}
			if len(kinds) != len(tc.kind) {
				t.Fatalf("steps %v, want %v\n%s", kinds, tc.kind, describeViolation(m, r))
			}
			for i := range kinds {
				if kinds[i] != tc.kind[i] {
					t.Fatalf("step %d is %s, want %s\n%s", i+1, parallelKindNames[kinds[i]], parallelKindNames[tc.kind[i]], describeViolation(m, r))
				}
			}
			a := model.Key(0)
			c := &tr[len(tr)-1].State.Cap
			u := &c.Plan.Units[0]
			ins, del := c.Log.At(1), c.Log.At(2)
			closeStep := tr[6] // state after the close
			switch {
			case c.Log.Init[a] != model.Absent:
				t.Errorf("base store %v, want empty", c.Log.Init)
			case c.Log.Len() != 2 || ins.Key != a || ins.Img == model.Absent || del.Key != a || del.Img != model.Absent:
				t.Errorf("log %v: want an insert of %v and its delete", c.Log.Ev[:c.Log.N], a)
			case u.Lo != 1 || u.Hi != 2:
				t.Errorf("bracket %v, want (1, 2]", u.Window())
			case c.ReadAt[a] != 1 || u.Refresh[a] != ins.Img:
				t.Errorf("R(%v) = %v read at %d, want the inserted %v at the low edge", a, u.Refresh[a], c.ReadAt[a], ins.Img)
			case closeStep.State.Cap.Out != tr[5].State.Cap.Out || u.Merged(&c.Log, a) != model.Absent:
				t.Errorf("the close emitted %v (merged %v), want nothing", closeStep.State.Cap.Out, u.Merged(&c.Log, a))
			case c.Start != 0:
				t.Errorf("s0 = %d, want c0", c.Start)
			case c.Out.Val[a] != ins.Img || c.Out.Tag[a] != 1:
				t.Errorf("replay %v=%v@%d: want the insert, emitted by the live reader", a, c.Out.Val[a], c.Out.Tag[a])
			case c.Log.Sigma(u.Hi, a) != model.Absent:
				t.Errorf("σ_%d(%v) = %v, want ⊥", u.Hi, a, c.Log.Sigma(u.Hi, a))
			}
		})
	}
	// The lawful gate on the same bounds: every invariant holds.
	cfg.Fault = None
	if r := runParallel(t, newParallel(cfg, ParallelParts{}), 2); r.Verdict != explore.Pass {
		t.Errorf("lawful gate: %v %s", r.Verdict, describeViolation(newParallel(cfg, ParallelParts{}), r))
	}
}

// Decode inverts Encode on every reachable state, and refuses short input.
func TestParallelEncoding(t *testing.T) {
	m := newParallel(Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 2, InitialAny: true, Fault: HighBeforeRead}, ParallelParts{})
	seen := map[string]bool{}
	queue := m.Init()
	var buf []parallelAction
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		enc := m.Encode(&s, nil)
		if seen[string(enc)] {
			continue
		}
		seen[string(enc)] = true
		var d parallelState
		err := m.Decode(enc, &d)
		s.Cap.Dup, s.Cap.Inexact = 0, 0 // marks of the step, not part of the state
		if err != nil || d != s {
			t.Fatalf("Decode(Encode(s)) = %+v, %v; want %+v", d, err, s)
		}
		if err := m.Decode(enc[:len(enc)-1], new(parallelState)); err == nil {
			t.Fatalf("Decode accepted a truncated encoding")
		}
		buf = m.Actions(&s, buf[:0])
		for _, a := range buf {
			if next := s; m.Next(&s, a, &next) {
				queue = append(queue, next)
			}
		}
	}
}

// enumerateParallel counts the distinct reachable states of §7.5's protocol
// by plain recursion, written from the paper's description with its own
// state and a Go map for the seen set (no explore, no model.Capture, no
// Commits): every base store when cfg.InitialAny; transactions of 1..T rows
// on distinct keys in every order (no-op rows with cfg.NoOps, key K, which
// the reader skips, with cfg.WholeServer); per chunk low, reads in key order (each
// at any transaction boundary between the low offset and the log end), high,
// backfill-and-emit; once all chunks have closed, the reader's start s0 moves
// on while it has consumed nothing and s0 < min hi (Def. 6.4), and it
// consumes one position per step through the gate p > hi of the key's chunk.
func enumerateParallel(cfg Config) uint64 {
	type state struct {
		init   [8]int8
		n      int
		key    [model.MaxLog]int8
		img    [model.MaxLog]int8
		txn    [model.MaxLog]int8
		phase  [4]int8 // 0 idle, 1 reading, 2 high recorded, 3 closed
		lo, hi [4]int8
		read   [8]bool
		rv, ra [8]int8
		out    [8]int8 // replay of the emitted stream
		tag    [8]int8
		start  int8
		pos    int8
	}
	K, C := cfg.Keys, cfg.Chunks
	owner := func(k int) int { // chunk i owns [i*K/C, (i+1)*K/C)
		for i := 0; i < C; i++ {
			if i*K/C <= k && k < (i+1)*K/C {
				return i
			}
		}
		return -1
	}
	sigma := func(s *state, c int, k int) int8 {
		v := s.init[k]
		for p := 0; p < c; p++ {
			if int(s.key[p]) == k {
				v = s.img[p]
			}
		}
		return v
	}
	allClosed := func(s *state) bool {
		for j := 0; j < C; j++ {
			if s.phase[j] != 3 {
				return false
			}
		}
		return true
	}
	seen := map[state]bool{}
	var visit func(s state)
	visit = func(s state) {
		if seen[s] {
			return
		}
		seen[s] = true
		// The source commits a transaction: rows on distinct keys, in any
		// order, each changing its key (with cfg.NoOps any value: an update
		// to the same value, a delete of an absent key), while fewer than E
		// events exist. With cfg.WholeServer it writes key K too, which no
		// chunk owns (§7.7).
		src := K
		if cfg.WholeServer {
			src++
		}
		label := int8(1)
		if s.n > 0 {
			label = s.txn[s.n-1] + 1
		}
		var commit func(t state, used [8]bool, room int)
		commit = func(t state, used [8]bool, room int) {
			for k := 0; k < src; k++ {
				if used[k] {
					continue
				}
				for v := 0; v <= cfg.Values; v++ {
					if int8(v) == sigma(&t, t.n, k) && !cfg.NoOps {
						continue
					}
					u := t
					u.key[u.n], u.img[u.n], u.txn[u.n] = int8(k), int8(v), label
					u.n++
					visit(u)
					if room > 1 {
						used2 := used
						used2[k] = true
						commit(u, used2, room-1)
					}
				}
			}
		}
		if room := min(cfg.Txn, cfg.Events-s.n); room > 0 {
			commit(s, [8]bool{}, room)
		}
		for i := 0; i < C; i++ {
			keys := []int{}
			for k := 0; k < K; k++ {
				if owner(k) == i {
					keys = append(keys, k)
				}
			}
			switch s.phase[i] {
			case 0: // record the low offset
				t := s
				t.phase[i], t.lo[i] = 1, int8(s.n)
				visit(t)
			case 1: // read the next key, or record the high offset once all are read
				next := -1
				for _, k := range keys {
					if !s.read[k] {
						next = k
						break
					}
				}
				if next < 0 {
					t := s
					t.phase[i], t.hi[i] = 2, int8(s.n)
					visit(t)
					break
				}
				// the select returns the key as it stood at any
				// transaction boundary c in [lo, n] (A-read, §4.3)
				for c := int(s.lo[i]); c <= s.n; c++ {
					if c != 0 && c != s.n && s.txn[c-1] == s.txn[c] {
						continue
					}
					t := s
					t.read[next], t.rv[next], t.ra[next] = true, sigma(&s, c, next), int8(c)
					visit(t)
				}
			case 2: // backfill (lo, hi] and emit the merged unit, tagged hi
				t := s
				for _, k := range keys {
					m := s.rv[k]
					for p := int(s.lo[i]); p < int(s.hi[i]); p++ {
						if int(s.key[p]) == k {
							m = s.img[p]
						}
					}
					if m != 0 {
						t.out[k], t.tag[k] = m, s.hi[i]
					}
				}
				t.phase[i] = 3
				visit(t)
			}
		}
		if allClosed(&s) && int(s.pos) < s.n {
			// consume; pass only beyond the owner's high, and nothing
			// outside the scope
			t := s
			t.pos++
			k := int(s.key[s.pos])
			if o := owner(k); o >= 0 && t.pos > s.hi[o] {
				t.out[k], t.tag[k] = s.img[s.pos], t.pos
			}
			visit(t)
			// start later: nothing consumed yet, s0 below every high
			minHi := s.hi[0]
			for j := 1; j < C; j++ {
				minHi = min(minHi, s.hi[j])
			}
			if s.pos == s.start && s.start < minHi {
				t := s
				t.start++
				t.pos++
				visit(t)
			}
		}
	}
	var stores [][8]int8
	if cfg.InitialAny {
		var gen func(b [8]int8, k int)
		gen = func(b [8]int8, k int) {
			if k == K {
				stores = append(stores, b)
				return
			}
			for v := 0; v <= cfg.Values; v++ {
				b[k] = int8(v)
				gen(b, k+1)
			}
		}
		gen([8]int8{}, 0)
	} else {
		var b [8]int8
		for k := 0; k < K; k++ {
			b[k] = int8(cfg.Initial[k])
		}
		stores = append(stores, b)
	}
	for _, b := range stores {
		visit(state{init: b})
	}
	return uint64(len(seen))
}

func describeViolation(m *parallel, r *explore.Result[parallelState, parallelAction]) string {
	if r.Violation == nil {
		return "(no violation)"
	}
	v := r.Violation
	var b strings.Builder
	b.WriteString(v.Property + ": " + v.Reason + "\n")
	for i, st := range v.Trace {
		if st.HasAction {
			b.WriteString("  " + m.Describe(&v.Trace[i-1].State, st.Action) + "\n")
		}
	}
	return b.String()
}
