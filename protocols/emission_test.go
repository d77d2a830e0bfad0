package protocols

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
)

// emissionRun checks p under cfg with exact-emission, and without it, and
// returns both reports.
func emissionRun(t *testing.T, p *Protocol, cfg Config) (with, without explore.Report) {
	t.Helper()
	with, err := p.Check(context.Background(), cfg, explore.Options{Workers: 2, With: []string{invariants.ExactEmission.Name}})
	if err != nil {
		t.Fatal(err)
	}
	without, err = p.Check(context.Background(), cfg, explore.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return with, without
}

// reachedAt is the depth a sometimes-property was first reached at, 0 if
// never (or not listed).
func reachedAt(r explore.Report, name string) int {
	for _, s := range r.Sometimes {
		if s.Name == name {
			return s.Depth
		}
	}
	return 0
}

// Reference: Def. 6.2 (classic, readonly, composite, dump uncertain over
// (b, e]), Def. 6.3–6.4 (parallel), §6.4 (dump trusted) — every shipped
// protocol's stream is exactly its discipline's emission at small bounds,
// judged on non-trivial streams (emission-judged reached). The digest
// costs no state: the counts equal the run without the check, so the
// stream is a function of the rest of each state.
func TestExactEmissionShipped(t *testing.T) {
	small := Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1}
	for _, tc := range []struct {
		name string
		mode string
	}{
		{"classic", ""}, {"readonly", ""}, {"parallel", ""}, {"dump", DumpTrusted}, {"dump", DumpUncertain},
		{"composite", CompositeMixed}, {"composite", CompositeTablesync},
	} {
		t.Run(tc.name+" "+tc.mode, func(t *testing.T) {
			p, err := Lookup(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			cfg := small
			cfg.Mode = tc.mode
			cfg.Chunks = min(cfg.Chunks, p.Limits.Chunks)
			with, without := emissionRun(t, p, cfg)
			if with.Verdict != explore.Pass || reachedAt(with, "emission-judged") == 0 {
				t.Fatalf("verdict %v, emission-judged at depth %d: %+v", with.Verdict, reachedAt(with, "emission-judged"), with.Violation)
			}
			if with.Stats.Distinct != without.Stats.Distinct || reachedAt(without, "emission-judged") != 0 {
				t.Errorf("%d states with the digest, %d without", with.Stats.Distinct, without.Stats.Distinct)
			}
		})
	}
}

// Reference: Def. 6.2, Def. 6.4, certify S4 — redundant-copy sends an
// inserted row again as a copy right after its insert event. Every other
// property holds to the end of the search; exact-emission fails at once,
// naming the key that carries one entry too many: in classic the run
// commits k0 := 1, writes and reads the chunk, and consumes to the high
// mark (7 steps); in parallel the chunk closes first and the reader then
// streams the insert (6 steps).
func TestRedundantCopyKilled(t *testing.T) {
	tiny := Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Fault: RedundantCopy}
	for name, steps := range map[string]int{"classic": 7, "parallel": 6} {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := p.Check(context.Background(), tiny, explore.Options{Workers: 2, Continue: true, With: []string{"no-duplicate-delivery", "exact-emission"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Violations) != 1 || r.Violations[0].Property != "exact-emission" {
			var got []string
			for _, v := range r.Violations {
				got = append(got, v.Property)
			}
			t.Fatalf("%s: violated %v, want exact-emission alone", name, got)
		}
		v := r.Violations[0]
		if len(v.Steps)-1 != steps || !strings.Contains(v.Reason, "key k0: the stream carries") {
			t.Errorf("%s: %d steps, %q; want %d steps naming k0", name, len(v.Steps)-1, v.Reason, steps)
		}
	}
}

// exact-emission's digest mixes values: value renaming is refused with it.
func TestExactEmissionNoSymmetry(t *testing.T) {
	p, _ := Lookup("classic")
	cfg := Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}
	for _, o := range []explore.Options{{Symmetry: true}, {CheckSymmetry: true}} {
		o.With = []string{"exact-emission"}
		if _, err := p.Check(context.Background(), cfg, o); !errors.Is(err, ErrEmissionSymmetry) || !errors.Is(err, explore.ErrNoSymmetry) {
			t.Errorf("%+v: %v, want it refused", o, err)
		}
	}
}
