package explore

import (
	"strings"
	"testing"
)

// An opt-in property is checked only when With or Only names it; Only and
// With together check their union; a name neither knows is refused, and so
// is an opt-in sometimes-property.
func TestOptIn(t *testing.T) {
	above := func(n uint64) func(*uint64) string {
		return func(s *uint64) string {
			if *s > n {
				return "too big"
			}
			return ""
		}
	}
	props := []Property[uint64, int]{
		{Name: "small", Kind: Always, Check: above(3)},
		{Name: "tiny", Kind: Always, Check: above(1), OptIn: true},
	}
	m := counters{k: 1, n: 6, props: props}
	for _, tt := range []struct {
		only, with []string
		want       string // the violated property, or "" for a pass
	}{
		{nil, nil, "small"},
		{nil, []string{"tiny"}, "tiny"},
		{[]string{"small"}, nil, "small"},
		{[]string{"small"}, []string{"tiny"}, "tiny"},
		{[]string{"tiny"}, nil, "tiny"},
	} {
		r, err := Run(t.Context(), Machine[uint64, int](m), Options{Workers: 1, Only: tt.only, With: tt.with})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if r.Violation != nil {
			got = r.Violation.Property
		}
		if got != tt.want {
			t.Errorf("only %v with %v: violated %q, want %q", tt.only, tt.with, got, tt.want)
		}
	}
	if r, err := Run(t.Context(), Machine[uint64, int](counters{k: 1, n: 3, props: props}), Options{Workers: 1}); err != nil || r.Verdict != Pass {
		t.Errorf("tiny is opt-in, small holds below 3: %v %v", r.Verdict, err)
	}
	if _, err := Run(t.Context(), Machine[uint64, int](m), Options{With: []string{"huge"}}); err == nil || !strings.Contains(err.Error(), `"huge"`) {
		t.Errorf("unknown name: %v", err)
	}
	bad := counters{k: 1, n: 2, props: []Property[uint64, int]{{Name: "seen", Kind: Sometimes, Check: above(0), OptIn: true}}}
	if _, err := Run(t.Context(), Machine[uint64, int](bad), Options{}); err == nil || !strings.Contains(err.Error(), "cannot be opt-in") {
		t.Errorf("opt-in sometimes: %v", err)
	}
}
