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
// else; a gate on the low offset is wrong mid-run but right at rest; a live
// reader that runs before the backfills have emitted leaves the sink wrong at
// rest.
func TestParallelVariantClasses(t *testing.T) {
	cfg := Config{Keys: 2, Values: 2, Events: 3, Chunks: 2, Txn: 1}
	atHigh := Parallel(ParallelParts{Gate: func(plan model.Plan, o int, pos model.Coord) bool { return pos >= plan.Units[o].Hi }})
	atLow := Parallel(ParallelParts{Gate: func(plan model.Plan, o int, pos model.Coord) bool { return pos > plan.Units[o].Lo }})
	concurrent := Parallel(ParallelParts{Concurrent: true})
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
		{"concurrent/final-replay", concurrent, "final-replay", true},
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
