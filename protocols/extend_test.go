package protocols

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
)

// Extend adds an opt-in set, a property and a constraint to a shipped
// protocol in one call; extensions compose, and the extended model keeps
// its parts (traces, grade).
func TestExtend(t *testing.T) {
	cfg := Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, Fault: GatePassesHigh}
	plain, err := Parallel(ParallelParts{}).Check(t.Context(), cfg, explore.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Verdict != explore.Pass || !strings.Contains(fmt.Sprint(plain.Unchecked), "no-duplicate-delivery") {
		t.Fatalf("the gate passing the high offset's event passes a plain check (%v), naming the delivery check as unchecked (%v)", plain.Verdict, plain.Unchecked)
	}
	once := Extend(Parallel(ParallelParts{}), Extension{Name: "parallel-exactly-once", With: []string{"no-duplicate-delivery"}})
	if once.Name != "parallel-exactly-once" {
		t.Errorf("name %q", once.Name)
	}
	rep, err := once.Check(t.Context(), cfg, explore.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Violation == nil || rep.Violation.Property != "no-duplicate-delivery" || len(rep.Violation.Steps[1].Fields) == 0 || !rep.Stats.Graded {
		t.Fatalf("extended with the opt-in set: %v %+v (graded %v)", rep.Verdict, rep.Violation, rep.Stats.Graded)
	}
	// An explicit --only still checks exactly what it names.
	if rep, err := once.Check(t.Context(), cfg, explore.Options{Workers: 1, Only: []string{"final-replay"}}); err != nil || rep.Verdict != explore.Pass {
		t.Errorf("only final-replay: %v %v", rep.Verdict, err)
	}
	short := Property{Name: "log-under-2", Kind: explore.Always, Class: invariants.Claim, Check: func(c *model.Capture) string {
		if c.Log.Len() >= 2 {
			return "two events"
		}
		return ""
	}}
	both := Extend(once, Extension{Properties: []Property{short}})
	rep, err = both.Check(t.Context(), Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1}, explore.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Violation == nil || rep.Violation.Property != "log-under-2" {
		t.Fatalf("the added property: %+v", rep.Violation)
	}
	props := both.Properties(both.Defaults)
	if last := props[len(props)-1]; last.Name != "log-under-2" || last.Class != "claim" {
		t.Errorf("listed last: %+v", last)
	}
	bounded := Extend(both, Extension{Constraint: func(c *model.Capture) bool { return c.Log.Len() < 2 }})
	rep, err = bounded.Check(t.Context(), Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1}, explore.Options{Workers: 1, Only: []string{"final-replay"}})
	if err != nil || rep.Verdict != explore.Pass || rep.Stats.Distinct >= plain.Stats.Distinct {
		t.Errorf("constrained: %v %v, %d states of %d", rep.Verdict, err, rep.Stats.Distinct, plain.Stats.Distinct)
	}
	for _, bad := range []func(){
		func() { Extend(Parallel(ParallelParts{}), Extension{With: []string{"no-such"}}) },
		func() { Extend(&Protocol{Name: "bare"}, Extension{}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("a mistaken extension was accepted")
				}
			}()
			bad()
		}()
	}
}

// A variant built with a fault in its Defaults keeps it: a mutation of
// another fault on top is refused, the same one is not.
func TestReplacesDefaultFault(t *testing.T) {
	p := Classic(ClassicParts{})
	if err := p.Replaces(EarlyRelease); err != nil {
		t.Errorf("the published protocol: %v", err)
	}
	p.Name = "classic-early"
	p.Defaults.Fault = EarlyRelease
	if err := p.Replaces(EarlyRelease); err != nil {
		t.Errorf("the same fault: %v", err)
	}
	if err := p.Replaces(NoDiscard); err == nil || !strings.Contains(err.Error(), "built with the fault early-release") {
		t.Errorf("another fault: %v", err)
	}
}
