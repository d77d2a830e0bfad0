package protocols

import (
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
)

// The per-key merge rule is a part of each window-discard capture: a rule
// that never discards is exactly the no-discard fault (same states, same
// counterexample), and Flink CDC #592's rule, under which the snapshot row
// overrides an in-window update, leaves a stale row at rest.
func TestMergeRule(t *testing.T) {
	never := func(MergeEvent) bool { return false }
	flink592 := func(e MergeEvent) bool { return e.Op != OpUpdate }
	cfg := Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 1}
	opts := explore.Options{Workers: 1, Only: []string{"final-replay"}}
	for _, tt := range []struct {
		name                 string
		published, nev, f592 *Protocol
		noDiscard            bool
	}{
		{"classic", Classic(ClassicParts{}), Classic(ClassicParts{Discard: never}), Classic(ClassicParts{Discard: flink592}), true},
		{"readonly", Readonly(ReadonlyParts{}), Readonly(ReadonlyParts{Discard: never}), Readonly(ReadonlyParts{Discard: flink592}), true},
		{"composite", Composite(CompositeParts{}), Composite(CompositeParts{Discard: never}), Composite(CompositeParts{Discard: flink592}), false},
	} {
		c := cfg
		c.Mode = tt.published.Defaults.Mode
		pub, err := tt.published.Check(t.Context(), c, opts)
		if err != nil {
			t.Fatal(err)
		}
		if pub.Verdict != explore.Pass {
			t.Fatalf("%s published: %v", tt.name, pub.Verdict)
		}
		f, err := tt.f592.Check(t.Context(), c, opts)
		if err != nil {
			t.Fatal(err)
		}
		if f.Violation == nil {
			t.Errorf("%s with #592's rule: %v, want final-replay violated", tt.name, f.Verdict)
		} else if text := f.Violation.Text(false); !strings.Contains(text, "kept (the variant's merge rule") && !strings.Contains(text, "keeps buffered") {
			t.Errorf("%s: the trace does not name the variant's rule:\n%s", tt.name, text)
		}
		nev, err := tt.nev.Check(t.Context(), c, opts)
		if err != nil {
			t.Fatal(err)
		}
		if nev.Violation == nil {
			t.Errorf("%s never discarding: %v, want final-replay violated", tt.name, nev.Verdict)
			continue
		}
		if !tt.noDiscard {
			continue
		}
		fc := c
		fc.Fault = NoDiscard
		fault, err := tt.published.Check(t.Context(), fc, opts)
		if err != nil {
			t.Fatal(err)
		}
		if fault.Violation == nil || fault.Stats.Distinct != nev.Stats.Distinct || len(fault.Violation.Steps) != len(nev.Violation.Steps) || fault.Violation.Reason != nev.Violation.Reason {
			t.Errorf("%s: never discarding explores %d states to %+v; the no-discard fault %d to %+v", tt.name, nev.Stats.Distinct, nev.Violation, fault.Stats.Distinct, fault.Violation)
		}
	}
}
