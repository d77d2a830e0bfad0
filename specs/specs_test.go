package specs

import (
	"context"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/mutations"
)

// Reference: §10 — the quick set of the paper's bounded runs and every
// mutated run; each verdict must be its expectation.
func TestQuickSpecs(t *testing.T) {
	all, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if !s.Quick {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			o, err := Run(context.Background(), s, explore.Options{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if !o.OK {
				t.Errorf("%s: %s", s.Name, o.Why)
			}
			if s.Expect != "pass" && (o.Report.Violation == nil || len(o.Report.Violation.Steps) < 1) {
				t.Errorf("%s: no counterexample trace", s.Name)
			}
			if s.Mutation == "" && !reached(o.Report, "copy-decides-frontier") {
				t.Errorf("%s: copy-decides-frontier never reached: the run never depended on its copy", s.Name)
			}
		})
	}
}

// Reference: S-OBS, Thm 1 — a pass means the copy was checked: every quick
// positive spec fails frontier replay once its capture drops its copy.
func TestCopyDroppedKillsQuickSpecs(t *testing.T) {
	all, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	var out []Outcome
	for _, s := range all {
		if s.Quick && s.Mutation == "" {
			cfg, _, err := s.Config()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, Outcome{Spec: s, Config: cfg})
		}
	}
	ks, err := copyKills(context.Background(), out, explore.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != len(out) || len(ks) < 5 {
		t.Fatalf("%d copy-dropped runs for %d quick positive specs", len(ks), len(out))
	}
	for _, k := range ks {
		if !k.Killed {
			t.Errorf("%s: not killed (failing: %v)", k.Spec, k.Failing)
		}
	}
}

func reached(r explore.Report, name string) bool {
	for _, s := range r.Sometimes {
		if s.Name == name {
			return s.Reached
		}
	}
	return false
}

// The spec set covers what the paper ran: five bounded runs per protocol
// (25 in all) and, for every mutation, one spec per protocol it applies to.
func TestCoverage(t *testing.T) {
	all, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	bounded := map[string]int{}
	mutated := map[string]bool{}
	for _, s := range all {
		if s.Mutation == "" {
			bounded[s.Protocol]++
			if s.Expect != "pass" {
				t.Errorf("%s: an unmutated spec must expect pass", s.Name)
			}
			continue
		}
		mutated[s.Mutation+"/"+s.Protocol] = true
		if m, _ := mutations.Lookup(s.Mutation); s.Expect != m.Breaks {
			t.Errorf("%s expects %s, the mutation breaks %s", s.Name, s.Expect, m.Breaks)
		}
	}
	total := 0
	for p, n := range bounded {
		total += n
		if n < 5 {
			t.Errorf("%s has %d bounded runs, want at least 5", p, n)
		}
	}
	if total < 25 || len(bounded) != 5 {
		t.Errorf("%d bounded runs over %d protocols, want ≥ 25 over 5", total, len(bounded))
	}
	for _, m := range mutations.All {
		for _, p := range m.Protocols {
			if !mutated[m.Name()+"/"+p] {
				t.Errorf("mutation %s has no spec for %s", m.Name(), p)
			}
		}
	}
}

// Bad spec files are one error naming the file, the field and the problem.
func TestParseErrors(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"protocol":"classic","keyz":3,"expect":"pass"}`, `x.json: field "keyz": unknown field`},
		{`{"protocol":"tlc","expect":"pass"}`, `x.json: field "protocol": unknown protocol "tlc"`},
		{`{"protocol":"classic","keys":99,"expect":"pass"}`, `x.json: field "keys": 99 is out of range 1..`},
		{`{"protocol":"classic","keys":"3","expect":"pass"}`, `x.json: field "keys": expected int, got string`},
		{`{"protocol":"classic","expect":"maybe"}`, `x.json: field "expect": "maybe" is not pass`},
		{`{"protocol":"classic"}`, `x.json: field "expect": missing`},
		{`{"protocol":"classic","mutation":"gate-drops-boundary","expect":"pass"}`, `x.json: field "mutation": gate-drops-boundary does not apply to classic`},
		{`{"protocol":"dump","mutation":"claim-inside-uncertainty","expect":"pass"}`, `x.json: field "mode": mutation claim-inside-uncertainty needs mode "uncertain"`},
		{`{"protocol":"classic","initial":[1,9],"keys":2,"values":2,"expect":"pass"}`, `x.json: field "initial":`},
		{`{"protocol":"dump","mode":"fuzzy","expect":"pass"}`, `x.json: field "mode": "fuzzy" is not one of`},
		{`protocol: classic`, `x.json: not valid JSON`},
		{`{"protocol":"classic","initial":"some","expect":"pass"}`, `x.json: "some" is neither "any" nor a list of values`},
		{`{"protocol":"classic","initial":[1],"expect":"pass","keys":1,"values":0}`, `x.json: field "values": 0 is out of range`},
	}
	for _, tt := range tests {
		_, err := Parse("specs/x.json", []byte(tt.body))
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "specs/x.json") {
			t.Errorf("Parse(%s) = %v, want %q", tt.body, err, tt.want)
		}
	}
}
