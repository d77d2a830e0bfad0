package mutations

import (
	"testing"

	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/protocols"
)

// Every fault has exactly one mutation, each names an invariant that exists,
// and lookups by name round-trip.
func TestCatalogue(t *testing.T) {
	seen := map[protocols.Fault]bool{}
	known := map[string]bool{"deadlock": true}
	for _, inv := range invariants.All {
		known[inv.Name] = true
	}
	for _, m := range All {
		if seen[m.Fault] {
			t.Errorf("%s listed twice", m.Name())
		}
		seen[m.Fault] = true
		if !known[m.Breaks] {
			t.Errorf("%s breaks unknown invariant %q", m.Name(), m.Breaks)
		}
		if len(m.Protocols) == 0 || m.Doc == "" || m.Cite == "" {
			t.Errorf("%s is missing protocols, doc or cite", m.Name())
		}
		got, err := Lookup(m.Name())
		if err != nil || got.Fault != m.Fault {
			t.Errorf("Lookup(%q) = %v, %v", m.Name(), got.Name(), err)
		}
	}
	for f := protocols.None + 1; f.String() != "fault?"; f++ {
		if !seen[f] {
			t.Errorf("fault %s has no mutation", f)
		}
	}
	paper := 0
	for _, m := range All {
		if m.Paper {
			paper++
		}
	}
	if paper != 7 { // §10's mutated runs
		t.Errorf("%d paper mutations, want 7", paper)
	}
	if _, err := Lookup("frobnicate"); err == nil {
		t.Error("Lookup of an unknown name succeeded")
	}
}
