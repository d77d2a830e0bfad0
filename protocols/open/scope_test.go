package open

import (
	"context"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/protocols"
)

// Reference: §7.7 (the whole-server log) — every open discipline skips the
// rows of a key outside the scope: each mode keeps its verdict on a
// whole-server log (the lawful ones pass, the broken ones still fail), so no
// verdict depends on every row being the scope's.
func TestWholeServerOpen(t *testing.T) {
	for _, name := range []string{"keyrange", "rewind", "versionmax", "reread"} {
		p, err := protocols.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range p.Limits.Modes {
			cfg := protocols.Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, Mode: mode}
			plain, err := p.Check(context.Background(), cfg, explore.Options{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			cfg.WholeServer = true
			whole, err := p.Check(context.Background(), cfg, explore.Options{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			lawful := mode == KeyrangeAdvancing || mode == RewindPreimage || mode == VersionmaxEngine || mode == RereadFresh
			if whole.Verdict != plain.Verdict || lawful && whole.Verdict != explore.Pass || whole.Stats.Distinct <= plain.Stats.Distinct {
				t.Errorf("%s %s: %v with %d states on a whole-server log, %v with %d without", name, mode, whole.Verdict, whole.Stats.Distinct, plain.Verdict, plain.Stats.Distinct)
			}
		}
	}
}
