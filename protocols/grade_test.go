package protocols

import (
	"context"
	"slices"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
)

// gradeCases are the configurations each grade is checked under: every
// shipped protocol in each of its modes.
var gradeCases = []struct {
	protocol, mode string
}{
	{"classic", ""},
	{"readonly", ""},
	{"parallel", ""},
	{"dump", DumpTrusted},
	{"dump", DumpUncertain},
	{"composite", CompositeMixed},
	{"composite", CompositeTablesync},
}

// gradeConfig is the small configuration of a grade case under fault f:
// two row events fewer under the race detector, which slows exploration
// about tenfold.
func gradeConfig(protocol, mode string, f Fault) Config {
	cfg := Config{Keys: 2, Values: 2, Events: 3, Chunks: 2, Txn: 1, Mode: mode, Fault: f}
	if classicRace {
		cfg.Events = 2
	}
	if protocol == "dump" {
		cfg.Chunks = 1 // one unit owns every key (Prop 6, Thm 8)
	}
	if f == SplitTransaction || f == InteriorExecutedSet {
		cfg.Txn = 2 // both act only on a transaction of two rows
	}
	return cfg
}

// violated names the property r violates, "" when none.
func violated(r explore.Report) string {
	if r.Violation == nil {
		return ""
	}
	return r.Violation.Property
}

// gradeCompare checks p under cfg by its grade (no seen-set) and with a
// seen-set, and fails unless the two agree on the verdict, the violated
// property, the distinct and generated counts and the depth. The engine
// itself stops the graded run with an error at the first step that does not
// add one to the grade. It returns the graded report.
func gradeCompare(t *testing.T, p *Protocol, cfg Config, opts explore.Options) explore.Report {
	t.Helper()
	opts.Workers = 2
	graded, err := p.Check(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.NoGrade = true
	seen, err := p.Check(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !graded.Stats.Graded || seen.Stats.Graded {
		t.Fatalf("graded run Graded=%v, seen-set run Graded=%v", graded.Stats.Graded, seen.Stats.Graded)
	}
	g, s := graded.Stats, seen.Stats
	if graded.Verdict != seen.Verdict || violated(graded) != violated(seen) ||
		g.Distinct != s.Distinct || g.Generated != s.Generated || g.Depth != s.Depth {
		t.Errorf("only %v: graded: %s %q, %d distinct, %d generated, depth %d; seen-set: %s %q, %d distinct, %d generated, depth %d",
			opts.Only, graded.VerdictName, violated(graded), g.Distinct, g.Generated, g.Depth,
			seen.VerdictName, violated(seen), s.Distinct, s.Generated, s.Depth)
	}
	return graded
}

// TestGradeKeepsOutcomes runs every protocol, as published and under each
// of its faults, by its grade and with a seen-set, and requires the same
// outcome. A faulty run stops at its first violation, before it has taken
// every kind of step, so (but for the race detector's run, kept short) it
// is run again without the property it violated and without deadlock
// reports, until it passes: the grade is then checked on every step of the
// configuration's whole state space.
//
// Reference: explore.Graded; §2.1 (S-LOG: a log that grows by whole
// transactions).
func TestGradeKeepsOutcomes(t *testing.T) {
	for _, c := range gradeCases {
		p, err := Lookup(c.protocol)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range append([]Fault{None}, p.Faults...) {
			cfg := gradeConfig(c.protocol, c.mode, f)
			t.Run(c.protocol+"/"+c.mode+"/"+f.String(), func(t *testing.T) {
				var rest []string // the always and transition properties not yet violated
				for _, q := range p.Properties(cfg) {
					if q.Kind != explore.Sometimes && !q.OptIn {
						rest = append(rest, q.Name)
					}
				}
				var opts explore.Options
				for round, rounds := 0, len(rest)+1; ; round++ {
					r := gradeCompare(t, p, cfg, opts)
					if r.Verdict == explore.Pass || classicRace {
						return
					}
					if r.Verdict != explore.Violated || round == rounds {
						t.Fatalf("round %d: %s %q", round, r.VerdictName, violated(r))
					}
					rest = slices.DeleteFunc(rest, func(n string) bool { return n == violated(r) })
					if len(rest) == 0 {
						t.Fatalf("every property is violated")
					}
					opts = explore.Options{Only: rest, NoDeadlock: true}
					cfg.Events = 2 // the whole space, at the bounds of the race detector's run
				}
			})
		}
	}
}
