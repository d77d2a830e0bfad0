package protocols_test

import (
	"context"
	"slices"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
	"github.com/cutcheck/cutcheck/protocols/open"
)

// gradeCase is a protocol or open discipline in one of its modes, with the
// small configuration its grade is checked at under fault f.
type gradeCase struct {
	name, mode string
	config     func(name, mode string, f protocols.Fault) protocols.Config
	shipped    bool // under the race detector, checked without the reruns (kept short)
}

// shippedConfig: two keys, three row events (two under the race detector,
// which slows exploration about tenfold), two chunks.
func shippedConfig(name, mode string, f protocols.Fault) protocols.Config {
	cfg := protocols.Config{Keys: 2, Values: 2, Events: 3, Chunks: 2, Txn: 1, Mode: mode, Fault: f}
	if protocols.RaceEnabled {
		cfg.Events = 2
	}
	if name == "dump" {
		cfg.Chunks = 1 // one unit owns every key (Prop 6, Thm 8)
	}
	if f == protocols.SplitTransaction || f == protocols.InteriorExecutedSet {
		cfg.Txn = 2 // both act only on a transaction of two rows
	}
	return cfg
}

// openConfig: two keys, two row events, two units, over a base store with
// one row (k0 present, k1 absent), so a copy reads both a row the log never
// wrote and an absent one. For reread the row has both columns set (V = 4):
// its first update is then a delta that omits a column, deltas collide and
// the brackets loop, and stale-bracket takes its re-read.
func openConfig(name, mode string, f protocols.Fault) protocols.Config {
	cfg := protocols.Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1, Mode: mode, Fault: f, Initial: model.Store{1}}
	if name == "reread" {
		cfg.Values, cfg.Initial = 4, model.Store{4}
	}
	return cfg
}

// gradeCases are every shipped protocol and open discipline in each of its
// modes.
func gradeCases() []gradeCase {
	cs := []gradeCase{
		{"classic", "", shippedConfig, true},
		{"readonly", "", shippedConfig, true},
		{"parallel", "", shippedConfig, true},
		{"dump", protocols.DumpTrusted, shippedConfig, true},
		{"dump", protocols.DumpUncertain, shippedConfig, true},
		{"composite", protocols.CompositeMixed, shippedConfig, true},
		{"composite", protocols.CompositeTablesync, shippedConfig, true},
	}
	for name, modes := range map[string][]string{
		"keyrange":   {open.KeyrangeAdvancing, open.KeyrangeFrozen, open.KeyrangeNonmonotone},
		"versionmax": {open.VersionmaxEngine, open.VersionmaxClient, open.VersionmaxNoTombstone},
		"rewind":     {open.RewindPreimage, open.RewindMissingPreimage, open.RewindWrongSuffix},
		"reread":     {open.RereadFresh, open.RereadStaleBracket, open.RereadApplyDeltas},
	} {
		for _, m := range modes {
			cs = append(cs, gradeCase{name, m, openConfig, false})
		}
	}
	return cs
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
func gradeCompare(t *testing.T, p *protocols.Protocol, cfg protocols.Config, opts explore.Options) explore.Report {
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

// TestGradeKeepsOutcomes runs every shipped protocol and open discipline,
// in each mode, as published and under each of its faults, by its grade and
// with a seen-set, and requires the same outcome. A faulty run stops at its
// first violation, before it has taken every kind of step, so (but for the
// shipped protocols under the race detector, kept short) it is run again
// without the properties it violated and without deadlock reports, at two
// row events, until it passes: the grade is then checked on every step of
// the configuration's whole state space.
//
// Reference: explore.Graded; §2.1 (S-LOG: a log that grows by whole
// transactions); §6.5 (the open disciplines).
func TestGradeKeepsOutcomes(t *testing.T) {
	for _, c := range gradeCases() {
		p, err := protocols.Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range append([]protocols.Fault{protocols.None}, p.Faults...) {
			cfg := c.config(c.name, c.mode, f)
			t.Run(c.name+"/"+c.mode+"/"+f.String(), func(t *testing.T) {
				var rest []string // the always and transition properties not yet violated
				for _, q := range p.Properties(cfg) {
					if q.Kind != explore.Sometimes && !q.OptIn {
						rest = append(rest, q.Name)
					}
				}
				var opts explore.Options
				for round, rounds := 0, len(rest)+1; ; round++ {
					r := gradeCompare(t, p, cfg, opts)
					if r.Verdict == explore.Pass || protocols.RaceEnabled && c.shipped {
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
