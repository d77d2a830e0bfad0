package protocols

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

// checkVariant runs p under cfg with opts and returns its report.
func checkVariant(t *testing.T, p *Protocol, cfg Config, opts explore.Options) explore.Report {
	t.Helper()
	opts.Workers = 2
	rep, err := p.Check(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A fault that is a choice of a part is that choice: the gate written by a
// user equals gate-repeats-window, and the window written by a user equals
// low-edge-off-by-one, in verdict, counts and counterexample.
func TestParallelFaultsAreParts(t *testing.T) {
	cfg := Config{Keys: 2, Values: 2, Events: 3, Chunks: 2, Txn: 1}
	for _, tc := range []struct {
		fault Fault
		parts ParallelParts
	}{
		{GateRepeatsWindow, ParallelParts{Gate: func(plan model.Plan, _ int, pos model.Coord) bool { return pos > MinHigh(&plan) }}},
		{LowEdgeOffByOne, ParallelParts{Window: func(u model.Unit) model.Window { return model.Window{Lo: u.Lo + 1, Hi: u.Hi} }}},
	} {
		t.Run(tc.fault.String(), func(t *testing.T) {
			faulty := cfg
			faulty.Fault = tc.fault
			a := checkVariant(t, Parallel(ParallelParts{}), faulty, explore.Options{})
			b := checkVariant(t, Parallel(tc.parts), cfg, explore.Options{})
			if a.Verdict != explore.Violated || b.Verdict != explore.Violated {
				t.Fatalf("verdicts %v, %v; want both violated", a.Verdict, b.Verdict)
			}
			if a.Violation.Property != b.Violation.Property || a.Stats.Distinct != b.Stats.Distinct || len(a.Violation.Steps) != len(b.Violation.Steps) {
				t.Fatalf("fault: %s in %d steps (%d states); parts: %s in %d steps (%d states)",
					a.Violation.Property, len(a.Violation.Steps), a.Stats.Distinct, b.Violation.Property, len(b.Violation.Steps), b.Stats.Distinct)
			}
		})
	}
}

// A fault that is a choice of a part is made on top of the variant's own
// part, not in place of it: a variant whose gate and window are the
// published ones written by hand gets, under each such fault, exactly what
// the published protocol gets, and its own part is still the one called.
func TestParallelFaultsKeepVariantParts(t *testing.T) {
	cfg := Config{Keys: 2, Values: 2, Events: 3, Chunks: 2, Txn: 1}
	for _, tc := range []struct {
		f    Fault
		gate bool // the fault is a gate's, else a window's
	}{
		{WindowOnlyWithholding, true}, {GateDropsBoundary, true}, {GateRepeatsWindow, true}, {GatePassesHigh, true},
		{SkippedBackfill, false}, {LowEdgeOffByOne, false}, {HighEdgeOffByOne, false},
	} {
		f := tc.f
		t.Run(f.String(), func(t *testing.T) {
			var gateCalls, windowCalls atomic.Int64
			own := Parallel(ParallelParts{
				Gate: func(plan model.Plan, o int, pos model.Coord) bool {
					gateCalls.Add(1)
					return PublishedGate(&plan, o, pos)
				},
				Window: func(u model.Unit) model.Window {
					windowCalls.Add(1)
					return u.Window()
				},
			})
			faulty := cfg
			faulty.Fault = f
			a := checkVariant(t, Parallel(ParallelParts{}), faulty, explore.Options{})
			b := checkVariant(t, own, faulty, explore.Options{})
			calls := windowCalls.Load()
			if tc.gate {
				calls = gateCalls.Load()
			}
			if calls == 0 {
				t.Fatal("the variant's own part was replaced: never called")
			}
			if b.Verdict != a.Verdict || b.Stats.Distinct != a.Stats.Distinct {
				t.Fatalf("published: %v, %d states; variant: %v, %d states", a.Verdict, a.Stats.Distinct, b.Verdict, b.Stats.Distinct)
			}
			if a.Violation != nil && (b.Violation.Property != a.Violation.Property || len(b.Violation.Steps) != len(a.Violation.Steps)) {
				t.Fatalf("published: %s in %d steps; variant: %s in %d steps",
					a.Violation.Property, len(a.Violation.Steps), b.Violation.Property, len(b.Violation.Steps))
			}
		})
	}
}

// The consequence classes tell variants apart (§7.5, A-handoff): a gate that
// also passes the event at the high offset delivers it twice and nothing
// else; a gate on the low offset is wrong mid-run but right at rest. (A live
// reader that runs while chunks are open, held at each open chunk's high
// offset, is right throughout: TestParallelConcurrentHeld.)
func TestParallelVariantClasses(t *testing.T) {
	cfg := Config{Keys: 2, Values: 2, Events: 3, Chunks: 2, Txn: 1}
	atHigh := Parallel(ParallelParts{Gate: func(plan model.Plan, o int, pos model.Coord) bool { return pos >= plan.Units[o].Hi }})
	atLow := Parallel(ParallelParts{Gate: func(plan model.Plan, o int, pos model.Coord) bool { return pos > plan.Units[o].Lo }})
	for _, tc := range []struct {
		name  string
		p     *Protocol
		only  string
		fails bool
	}{
		{"high-read-twice/all", atHigh, "", false},
		{"high-read-twice/no-duplicate-delivery", atHigh, "no-duplicate-delivery", true},
		{"gate-low/final-replay", atLow, "final-replay", false},
		{"gate-low/per-key-monotonicity", atLow, "per-key-monotonicity", true},
		{"published/no-duplicate-delivery", Parallel(ParallelParts{}), "no-duplicate-delivery", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts explore.Options
			if tc.only != "" {
				opts.Only = []string{tc.only}
			}
			rep := checkVariant(t, tc.p, cfg, opts)
			switch {
			case tc.fails && (rep.Verdict != explore.Violated || rep.Violation.Property != tc.only):
				t.Fatalf("want %s to fail, got %v %+v", tc.only, rep.Verdict, rep.Violation)
			case !tc.fails && rep.Verdict != explore.Pass:
				t.Fatalf("want pass, got %v: %s", rep.Verdict, rep.Violation.Text(false))
			}
		})
	}
}

// Every shipped discipline delivers each log event once (§6.4, §9): the
// classic loop's high edge is a marker, range-merge withholds everything at
// or before hi, and where a point splice or a sampled high edge falls on a
// data event the consumer already streamed, the copy that shares its tag is
// a copied row, not the event again (model.Capture.EmitCopy).
func TestDeliveryExactlyOnce(t *testing.T) {
	small := Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 1, InitialAny: true}
	for _, tc := range []struct {
		protocol, mode string
		once           bool
	}{
		{"classic", "", true},
		{"parallel", "", true},
		{"readonly", "", true},
		{"dump", DumpTrusted, true},
		{"dump", DumpUncertain, true},
		{"composite", "mixed", true},
		{"composite", "tablesync", true},
	} {
		t.Run(tc.protocol+"/"+tc.mode, func(t *testing.T) {
			p, err := Lookup(tc.protocol)
			if err != nil {
				t.Fatal(err)
			}
			cfg := small
			cfg.Mode = tc.mode
			rep := checkVariant(t, p, cfg, explore.Options{Only: []string{"no-duplicate-delivery"}})
			if got := rep.Verdict == explore.Pass; got != tc.once {
				t.Fatalf("exactly once: got %v (%v), want %v", got, rep.Verdict, tc.once)
			}
			if !tc.once && rep.Violation.Class != "delivery" {
				t.Fatalf("class %q, want delivery", rep.Violation.Class)
			}
		})
	}
}

// Reference: Def. 6.4, §7.5 — the concurrent pass is lawful when held: the
// live reader runs while chunks are open (reader-runs-while-chunk-open is
// reached) and every invariant holds; the same pass unheld
// (reader-before-backfill) streams beyond an open chunk's high offset, and
// the merged block that follows overwrites the newer event.
func TestParallelConcurrentHeld(t *testing.T) {
	cfg := Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1}
	rep := checkVariant(t, Parallel(ParallelParts{Concurrent: true}), cfg, explore.Options{})
	if rep.Verdict != explore.Pass {
		t.Fatalf("held concurrent pass: %v %s", rep.Verdict, rep.Violation.Text(false))
	}
	found := false
	for _, s := range rep.Sometimes {
		if s.Name == "reader-runs-while-chunk-open" {
			found = s.Reached
		}
	}
	if !found {
		t.Error("the held reader never consumed while a chunk was open")
	}
	unheld := cfg
	unheld.Fault = ReaderBeforeBackfill
	rep = checkVariant(t, Parallel(ParallelParts{}), unheld, explore.Options{Only: []string{"final-replay"}})
	if rep.Verdict != explore.Violated || rep.Violation.Property != "final-replay" {
		t.Fatalf("unheld: want final-replay violated, got %v", rep.Verdict)
	}
}

// Reference: Def. 6.4 (s0 ⊑ hi_i for every unit) — under the concurrent pass
// the reader may start before any chunk has recorded its high offset, never
// beyond the least high offset the run ends with, and it never consumes a
// position beyond an open chunk's recorded high offset.
func TestParallelConcurrentStartAndHold(t *testing.T) {
	m := newParallel(Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1}, ParallelParts{Concurrent: true})
	seen := map[string]bool{}
	queue := m.Init()
	var buf []parallelAction
	early := false
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		enc := string(m.Encode(&s, nil))
		if seen[enc] {
			continue
		}
		seen[enc] = true
		c := &s.Cap
		for i := 0; i < 2; i++ {
			u := &c.Plan.Units[i]
			if s.Phase[i] == chunkHigh && c.Pos > u.Hi {
				t.Fatalf("reader at %d beyond open chunk %d's high %d", c.Pos, i+1, u.Hi)
			}
			if s.Phase[i] >= chunkHigh && c.Start > u.Hi {
				t.Fatalf("s0 = %d beyond chunk %d's high %d", c.Start, i+1, u.Hi)
			}
			if s.Phase[i] < chunkHigh && c.Start > c.Log.Len() {
				t.Fatalf("s0 = %d beyond the log end %d", c.Start, c.Log.Len())
			}
		}
		if c.Start > 0 && s.Phase[0] < chunkHigh && s.Phase[1] < chunkHigh {
			early = true
		}
		buf = m.Actions(&s, buf[:0])
		for _, a := range buf {
			if next := s; m.Next(&s, a, &next) {
				queue = append(queue, next)
			}
		}
	}
	if !early {
		t.Error("the start never moved before a high offset was recorded")
	}
}

// Reference: §7.7 (the whole-server log) — with a whole-server log the source
// also writes a key no chunk owns; the live reader skips those events (the
// gate is never asked about them), every invariant holds, and the state
// space is larger than the scope's own log gives. A scope of MaxKeys keys
// leaves no key outside it and is refused.
func TestParallelWholeServer(t *testing.T) {
	var outside atomic.Int64
	p := Parallel(ParallelParts{Gate: func(plan model.Plan, o int, pos model.Coord) bool {
		if o < 0 {
			outside.Add(1)
		}
		return pos > plan.Units[o].Hi
	}})
	cfg := Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 1}
	scoped := checkVariant(t, p, cfg, explore.Options{})
	cfg.WholeServer = true
	for _, parts := range []ParallelParts{{}, {Concurrent: true}} {
		rep := checkVariant(t, Parallel(parts), cfg, explore.Options{})
		if rep.Verdict != explore.Pass {
			t.Fatalf("whole-server %+v: %v %s", parts.Concurrent, rep.Verdict, rep.Violation.Text(false))
		}
	}
	whole := checkVariant(t, p, cfg, explore.Options{})
	if whole.Verdict != explore.Pass || outside.Load() != 0 {
		t.Fatalf("whole-server: %v, gate asked %d times about a key outside the scope", whole.Verdict, outside.Load())
	}
	if whole.Stats.Distinct <= scoped.Stats.Distinct {
		t.Errorf("whole-server explores %d states, the scope alone %d: no event outside the scope", whole.Stats.Distinct, scoped.Stats.Distinct)
	}
	cfg.Keys = model.MaxKeys
	if _, err := Parallel(ParallelParts{}).Check(context.Background(), cfg, explore.Options{}); err == nil {
		t.Error("a scope of every key accepted with a whole-server log")
	}
}
