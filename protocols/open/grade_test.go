package open

import (
	"context"
	"slices"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
)

// gradeCases are the open disciplines with every mode each has; each is
// checked as published and under each of its faults.
var gradeCases = []struct {
	name  string
	modes []string
}{
	{"keyrange", []string{KeyrangeAdvancing, KeyrangeFrozen, KeyrangeNonmonotone}},
	{"versionmax", []string{VersionmaxEngine, VersionmaxClient, VersionmaxNoTombstone}},
	{"rewind", []string{RewindPreimage, RewindMissingPreimage, RewindWrongSuffix}},
	{"reread", []string{RereadFresh, RereadStaleBracket, RereadApplyDeltas}},
}

// gradeConfig is a small configuration of discipline name in mode under
// fault f: two keys, two row events, two units, over a base store with one
// row (k0 present, k1 absent), so a copy reads both a row the log never
// wrote and an absent one. For reread the row has both columns set (V = 4):
// its first update is then a delta that omits a column, deltas collide and
// the brackets loop, and stale-bracket takes its re-read.
func gradeConfig(name, mode string, f protocols.Fault) protocols.Config {
	cfg := protocols.Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1, Mode: mode, Fault: f, Initial: model.Store{1}}
	if name == "reread" {
		cfg.Values, cfg.Initial = 4, model.Store{4}
	}
	return cfg
}

// violatedName names the property r violates, "" when none.
func violatedName(r explore.Report) string {
	if r.Violation == nil {
		return ""
	}
	return r.Violation.Property
}

// gradeCompare checks p under cfg by its grade (no seen-set) and with a
// seen-set, and fails unless the two agree on the verdict, the violated
// property, the distinct and generated counts and the depth. The engine
// stops the graded run with an error at the first step that does not add
// one to the grade.
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
	if graded.Verdict != seen.Verdict || violatedName(graded) != violatedName(seen) ||
		g.Distinct != s.Distinct || g.Generated != s.Generated || g.Depth != s.Depth {
		t.Errorf("only %v: graded: %s %q, %d distinct, %d generated, depth %d; seen-set: %s %q, %d distinct, %d generated, depth %d",
			opts.Only, graded.VerdictName, violatedName(graded), g.Distinct, g.Generated, g.Depth,
			seen.VerdictName, violatedName(seen), s.Distinct, s.Generated, s.Depth)
	}
	return graded
}

// TestGradeKeepsOutcomes runs every open discipline, in each mode and
// under each fault, by its grade and with a seen-set, and requires the same
// outcome. A run that stops at a violation has not yet taken every kind of
// step, so it is run again without the properties violated so far and
// without deadlock reports, until it passes: the grade is then checked on
// every step of the configuration's whole state space.
//
// Reference: explore.Graded; §6.5 (the four open disciplines).
func TestGradeKeepsOutcomes(t *testing.T) {
	for _, c := range gradeCases {
		p, err := protocols.Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range c.modes {
			for _, f := range append([]protocols.Fault{protocols.None}, p.Faults...) {
				cfg := gradeConfig(c.name, mode, f)
				t.Run(c.name+"/"+mode+"/"+f.String(), func(t *testing.T) {
					var rest []string // the always and transition properties not yet violated
					for _, q := range p.Properties(cfg) {
						if q.Kind != explore.Sometimes && !q.OptIn {
							rest = append(rest, q.Name)
						}
					}
					var opts explore.Options
					for round, rounds := 0, len(rest)+1; ; round++ {
						r := gradeCompare(t, p, cfg, opts)
						if r.Verdict == explore.Pass {
							return
						}
						if r.Verdict != explore.Violated || round == rounds {
							t.Fatalf("round %d: %s %q", round, r.VerdictName, violatedName(r))
						}
						rest = slices.DeleteFunc(rest, func(n string) bool { return n == violatedName(r) })
						if len(rest) == 0 {
							t.Fatalf("every property is violated")
						}
						opts = explore.Options{Only: rest, NoDeadlock: true}
					}
				})
			}
		}
	}
}
