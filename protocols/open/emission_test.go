package open

import (
	"context"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/protocols"
)

// Reference: §6.5 — each open discipline with a deterministic rule emits
// exactly it at small bounds: key-range gating (range-merge over the
// cursor's point brackets), rewind-by-preimage (a point splice at lo) and
// re-read normalization (window-discard over the final plan, unknown
// deltas withheld), each judged on non-trivial streams, with the counts of
// the run without the check. Version-max declares no exact emission: which
// entries it takes depends on when each copied row reaches the sink, which
// no plan records.
func TestExactEmissionOpen(t *testing.T) {
	cfg := protocols.Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1}
	for _, tc := range []struct{ name, mode string }{
		{"keyrange", KeyrangeAdvancing}, {"rewind", RewindPreimage}, {"reread", RereadFresh},
	} {
		p, err := protocols.Lookup(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		c := cfg
		c.Mode = tc.mode
		with, err := p.Check(context.Background(), c, explore.Options{Workers: 2, With: []string{"exact-emission"}})
		if err != nil {
			t.Fatal(err)
		}
		without, err := p.Check(context.Background(), c, explore.Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		judged := 0
		for _, s := range with.Sometimes {
			if s.Name == "emission-judged" {
				judged = s.Depth
			}
		}
		if with.Verdict != explore.Pass || judged == 0 || with.Stats.Distinct != without.Stats.Distinct {
			t.Errorf("%s %s: %v (%+v), emission-judged at depth %d, %d states with the digest and %d without",
				tc.name, tc.mode, with.Verdict, with.Violation, judged, with.Stats.Distinct, without.Stats.Distinct)
		}
	}
	// --all keeps no digest where the check is not declared: version-max's
	// states are the plain run's.
	vm, _ := protocols.Lookup("versionmax")
	for _, pr := range vm.Properties(vm.Defaults) {
		if pr.Name == "exact-emission" {
			t.Error("versionmax lists exact-emission")
		}
	}
	vcfg := cfg
	vcfg.Mode = VersionmaxEngine
	all, err := vm.Check(context.Background(), vcfg, explore.Options{Workers: 2, Continue: true})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := vm.Check(context.Background(), vcfg, explore.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if all.Stats.Distinct != plain.Stats.Distinct {
		t.Errorf("versionmax: %d states under --all, %d without", all.Stats.Distinct, plain.Stats.Distinct)
	}
}
