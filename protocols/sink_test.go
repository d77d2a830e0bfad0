package protocols

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

// sinkFailures explores p under cfg to the end (explore.Options.Continue)
// and returns the properties that fail, sorted and comma-separated, with
// the invariants' short names.
func sinkFailures(t *testing.T, p *Protocol, cfg Config) (string, explore.Report) {
	t.Helper()
	r, err := p.Check(context.Background(), cfg, explore.Options{Continue: true, With: []string{"no-duplicate-delivery"}})
	if err != nil {
		t.Fatal(err)
	}
	short := map[string]string{"final-replay": "final", "frontier-replay": "frontier", "closed-unit-cut": "cut",
		"per-key-monotonicity": "mono", "exact-tags": "tags", "no-duplicate-delivery": "dup", "exact-emission": "emission"}
	var out []string
	for _, v := range r.Violations {
		name := v.Property
		if s, ok := short[name]; ok {
			name = s
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return strings.Join(out, ","), r
}

// Reference: §6 (Def. 6.1, Cor. 4: the replay is last-writer-wins from the
// empty store; how a real sink applies the stream is outside the theorem),
// Thm 3 / Thm 5 (monotonicity is a claim about the stream), §6.5
// version-max.
//
// Each rule under each shipped protocol's published discipline and a few of
// its mutations, at keys 2, values 2, events 3, chunks 1, every property
// run to the end: the properties that fail. Short names: final =
// final-replay, frontier = frontier-replay, cut = closed-unit-cut, mono =
// per-key-monotonicity, tags = exact-tags, dup = no-duplicate-delivery.
//
// Derived before running, from what each rule does with a stream:
//   - A published discipline's stream is monotone with exact tags, so
//     version-max takes every entry (an entry's tag is never below the
//     sink's) and insert-ignore every copy that matters (a copy that meets
//     a streamed row carries the same value, both being σ at their tags with
//     no event between): both are last-writer-wins there. Upsert-only keeps
//     a deleted row, so it fails final-replay (and the cut claims) as soon
//     as the source deletes, under every protocol.
//   - The stream claims (mono, tags, dup) fail exactly as under the
//     default, whatever the rule: the stream is the same.
//   - parallel reader-before-backfill only reorders: the merged block (tag
//     hi) arrives after events beyond hi. Version-max rejects it and repairs
//     every sink claim; the stream stays non-monotone. Insert-ignore repairs
//     a streamed update but not a streamed delete: the copy then finds no
//     row and resurrects it, so final-replay still fails.
//   - classic early-release emits survivors tagged hi before the window's
//     events: last-writer-wins lets the later event win (transient only);
//     version-max rejects that event (tag below hi): a loss at rest (a
//     lost update, or a resurrection when the event is a delete);
//     insert-ignore takes the event as usual (as the default).
//   - classic and readonly no-discard: a survivor that an in-window update
//     should have discarded overwrites it; version-max takes it (tag hi is
//     the highest), insert-ignore refuses it over a row but inserts it where
//     the in-window event was a delete: every rule fails final-replay.
//   - parallel window-only-withholding (Prop 3): a key merged to ⊥ is
//     omitted from the block (absence by omission, §6), so no tag
//     stands against the stale pre-low insert that streams after it: no
//     rule repairs it (version-max needs tombstones, §6.5).
//   - Faults that make a copy wrong (dump false-recovery-point, composite
//     late-start) fail alike under every rule; gate-passes-high delivers an
//     event twice, a delivery failure under every rule.
//   - exact-emission judges the stream, whatever the rule: every fault
//     here changes it (an entry more, less or elsewhere) but
//     false-recovery-point, whose stale rows are the plan's own reads
//     emitted as the discipline emits them.
func TestSinkRules(t *testing.T) {
	const (
		lww, vmax, ignore, upsert = "last-writer-wins", "version-max", "insert-ignore", "upsert-only"
		sinkLoss                  = "cut,final,frontier"
	)
	tests := []struct {
		protocol, mode string
		fault          Fault
		want           map[string]string // rule → failing properties
	}{
		{"classic", "", None, map[string]string{lww: "", vmax: "", ignore: "", upsert: sinkLoss}},
		{"classic", "", NoDiscard, map[string]string{lww: "cut,emission,final,frontier,tags", vmax: "cut,emission,final,frontier,tags", ignore: "cut,emission,final,frontier,tags", upsert: "cut,emission,final,frontier,tags"}},
		{"classic", "", EarlyRelease, map[string]string{lww: "cut,emission,mono,tags", vmax: "cut,emission,final,frontier,mono,tags", ignore: "cut,emission,mono,tags", upsert: "cut,emission,final,frontier,mono,tags"}},
		{"readonly", "", None, map[string]string{lww: "", vmax: "", ignore: "", upsert: sinkLoss}},
		{"readonly", "", NoDiscard, map[string]string{lww: "cut,emission,final,frontier,tags", vmax: "cut,emission,final,frontier,tags", ignore: "cut,emission,final,frontier,tags", upsert: "cut,emission,final,frontier,tags"}},
		{"parallel", "", None, map[string]string{lww: "", vmax: "", ignore: "", upsert: sinkLoss}},
		{"parallel", "", ReaderBeforeBackfill, map[string]string{lww: "cut,emission,final,frontier,mono", vmax: "emission,mono", ignore: "cut,emission,final,frontier,mono", upsert: "cut,emission,final,frontier,mono"}},
		{"parallel", "", WindowOnlyWithholding, map[string]string{lww: "cut,emission,final,frontier,mono", vmax: "cut,emission,final,frontier,mono", ignore: "cut,emission,final,frontier,mono", upsert: "cut,emission,final,frontier,mono"}},
		{"parallel", "", GatePassesHigh, map[string]string{lww: "dup,emission", vmax: "dup,emission", ignore: "dup,emission", upsert: "cut,dup,emission,final,frontier"}},
		{"dump", "trusted", None, map[string]string{lww: "", vmax: "", ignore: "", upsert: sinkLoss}},
		{"dump", "uncertain", None, map[string]string{lww: "", vmax: "", ignore: "", upsert: sinkLoss}},
		{"dump", "trusted", FalseRecoveryPoint, map[string]string{
			lww: "contract,cut,final,frontier,tags,trusted-splice-trajectory", vmax: "contract,cut,final,frontier,tags,trusted-splice-trajectory",
			ignore: "contract,cut,final,frontier,tags,trusted-splice-trajectory", upsert: "contract,cut,final,frontier,tags,trusted-splice-trajectory"}},
		{"composite", "", None, map[string]string{lww: "", vmax: "", ignore: "", upsert: sinkLoss}},
		{"composite", "", LateStart, map[string]string{lww: "cut,emission,final,frontier,tags", vmax: "cut,emission,final,frontier,tags", ignore: "cut,emission,final,frontier,tags", upsert: "cut,emission,final,frontier,tags"}},
	}
	for _, tt := range tests {
		p, err := Lookup(tt.protocol)
		if err != nil {
			t.Fatal(err)
		}
		for _, rule := range model.SinkRules {
			name := tt.protocol + "/" + tt.mode + "/" + tt.fault.String() + "/" + rule.Name
			t.Run(name, func(t *testing.T) {
				cfg := p.Defaults
				cfg.Keys, cfg.Values, cfg.Events, cfg.Chunks, cfg.Fault, cfg.Sink = 2, 2, 3, 1, tt.fault, rule
				if tt.mode != "" {
					cfg.Mode = tt.mode
				}
				if got, _ := sinkFailures(t, p, cfg); got != tt.want[rule.Name] {
					t.Errorf("fails {%s}, want {%s}", got, tt.want[rule.Name])
				}
			})
		}
	}
}

// Users' rules, made once (rules are numbered for the whole program).
var (
	takeAll  = model.NewSinkRule("take-all", true, func(model.Value, model.Offset, model.Offered, bool) bool { return true })
	keepOnes = model.NewSinkRule("keep-ones", false, func(v model.Value, _ model.Offset, _ model.Offered, _ bool) bool { return v != 1 })
)

// Reference: §6, Def. 6.1. The default is the search as it was: naming
// last-writer-wins changes nothing, and a user's rule that takes every
// entry (a Sink kept and encoded beside the replay, always equal to it)
// explores exactly as many states to the same verdicts.
func TestSinkDefaultUnchanged(t *testing.T) {
	for _, name := range []string{"classic", "readonly", "parallel", "dump", "composite"} {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []Fault{None, p.Faults[0]} {
			cfg := p.Defaults
			cfg.Keys, cfg.Values, cfg.Events, cfg.Chunks, cfg.Fault = 2, 2, 3, 1, f
			want, base := sinkFailures(t, p, cfg)
			for _, rule := range []*model.SinkRule{model.LastWriterWins, takeAll} {
				cfg.Sink = rule
				got, r := sinkFailures(t, p, cfg)
				if got != want || r.Stats.Distinct != base.Stats.Distinct || r.Stats.Generated != base.Stats.Generated {
					t.Errorf("%s %s under %s: fails {%s}, %d/%d states; default: {%s}, %d/%d", name, f, rule.Name,
						got, r.Stats.Generated, r.Stats.Distinct, want, base.Stats.Generated, base.Stats.Distinct)
				}
			}
		}
	}
}

// Reference: §6.5 version-max; Thm 5. Under a rule the sink is part of the
// state: a trace shows it, and the counterexample of early-release under
// version-max ends with the sink holding the survivor while the stream's
// replay holds the later event.
func TestSinkInTrace(t *testing.T) {
	p, err := Lookup("classic")
	if err != nil {
		t.Fatal(err)
	}
	cfg := p.Defaults
	cfg.Keys, cfg.Values, cfg.Events, cfg.Chunks, cfg.Fault, cfg.Sink = 1, 2, 2, 1, EarlyRelease, model.VersionMax
	r, err := p.Check(context.Background(), cfg, explore.Options{Only: []string{"final-replay"}})
	if err != nil {
		t.Fatal(err)
	}
	mustViolate(t, r, "final-replay")
	last := r.Violation.Steps[len(r.Violation.Steps)-1]
	var sink, replay string
	for _, f := range last.Fields {
		switch f.Name {
		case "sink (version-max)":
			sink = f.Value
		case "replay":
			replay = f.Value
		}
	}
	if sink == "" || sink == replay {
		t.Errorf("last step: sink %q, replay %q: want the sink shown, apart from the replay", sink, replay)
	}
	if got := cfg.String(); !strings.HasSuffix(got, "sink=version-max fault=early-release") {
		t.Errorf("config %q does not name its sink", got)
	}
}

// Reference: §6.5. A rule that reads values is refused under value renaming
// unless it declares itself value-blind; a rule must be numbered.
func TestSinkSymmetry(t *testing.T) {
	p, err := Lookup("classic")
	if err != nil {
		t.Fatal(err)
	}
	cfg := p.Defaults
	cfg.Keys, cfg.Values, cfg.Events, cfg.Chunks = 2, 2, 2, 1
	cfg.Sink = keepOnes
	if _, err := p.Check(context.Background(), cfg, explore.Options{Symmetry: true}); err == nil || !strings.Contains(err.Error(), "keep-ones") {
		t.Errorf("a value-seeing rule under symmetry: err %v", err)
	}
	// A rule not made by NewSinkRule has no number a state can carry: refused,
	// not checked as the default.
	cfg.Sink = &model.SinkRule{Name: "literal", Take: keepOnes.Take, ValueBlind: true}
	if _, err := p.Check(context.Background(), cfg, explore.Options{}); err == nil || !strings.Contains(err.Error(), `"literal" was not made by model.NewSinkRule`) {
		t.Errorf("a rule literal: err %v", err)
	}
	// Under upsert-only the sink keeps values the replay has dropped; value
	// renaming renames them too, which --check-symmetry verifies on every
	// state, and the classes keep the verdict.
	cfg.Sink = model.UpsertOnly
	for _, opts := range []explore.Options{{CheckSymmetry: true, Continue: true}, {Symmetry: true}} {
		opts.Only = []string{"final-replay"}
		r, err := p.Check(context.Background(), cfg, opts)
		if err != nil {
			t.Fatalf("upsert-only, %+v: %v", opts, err)
		}
		v := r.Violation
		if v == nil && len(r.Violations) > 0 {
			v = r.Violations[0]
		}
		if r.Verdict != explore.Violated || v == nil || v.Property != "final-replay" {
			t.Errorf("upsert-only, symmetry %v, check-symmetry %v: %s", opts.Symmetry, opts.CheckSymmetry, r.VerdictName)
		}
	}
}

// Reference: §6.2, §6.3 (Def. 6.4), Prop 3's kind of loss. Insert-ignore
// keeps a copy from overwriting a streamed row, but a streamed delete
// leaves no row: a late copy then inserts the deleted row again. The
// failures of insert-ignore in TestSinkRules are such resurrections.
func TestInsertIgnoreResurrects(t *testing.T) {
	for _, tt := range []struct {
		protocol string
		fault    Fault
	}{{"parallel", ReaderBeforeBackfill}, {"classic", NoDiscard}} {
		p, err := Lookup(tt.protocol)
		if err != nil {
			t.Fatal(err)
		}
		cfg := p.Defaults
		cfg.Keys, cfg.Values, cfg.Events, cfg.Chunks, cfg.Fault, cfg.Sink = 2, 2, 3, 1, tt.fault, model.InsertIgnore
		r, err := p.Check(context.Background(), cfg, explore.Options{Only: []string{"final-replay"}})
		if err != nil {
			t.Fatal(err)
		}
		mustViolate(t, r, "final-replay")
		if !strings.HasSuffix(r.Violation.Reason, "sink holds 1, source holds ⊥") {
			t.Errorf("%s %s: %s, want a resurrected row", tt.protocol, tt.fault, r.Violation.Reason)
		}
	}
}
