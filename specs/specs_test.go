package specs

import (
	"context"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/mutations"
	"github.com/cutcheck/cutcheck/protocols"
	_ "github.com/cutcheck/cutcheck/protocols/open" // the §6.5 disciplines' specs
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
		if s.Quick && s.Mutation == "" && s.Expect == "pass" {
			cfg, _, err := s.Config()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, Outcome{Spec: s, Config: cfg})
		}
	}
	ks, err := copyKills(context.Background(), out, explore.Options{Workers: 2}, nil, nil)
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
		if strings.HasPrefix(s.Name, OpenPrefix) {
			continue // §6.5's open disciplines: their broken variants are modes, not mutations
		}
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

// badSpecs are files Parse must refuse, each with part of the one-line
// error it must give; they also seed FuzzSpec.
var badSpecs = []struct{ body, want string }{
	{`{"protocol":"classic","initial":"some","expect":"pass"}`, `"some" is neither "any" nor a list of values`},
	{`{"protocol":"classic","initial":[1],"expect":"pass","keys":1,"values":0}`, `x.json: field "values": 0 is out of range`},
	{`{"protocol":"classic","keyz":3,"expect":"pass"}`, `x.json: field "keyz": unknown field (known: protocol, keys,`},
	{`{"protocol":"tlc","expect":"pass"}`, `x.json: field "protocol": unknown protocol "tlc"`},
	{`{"protocol":"classic","keys":99,"expect":"pass"}`, `x.json: field "keys": 99 is out of range 1..`},
	{`{"protocol":"classic","keys":"3","expect":"pass"}`, `x.json: field "keys": expected int, got string`},
	{`{"protocol":"classic","keys":3.5,"expect":"pass"}`, `x.json: field "keys": expected int, got number 3.5`},
	{`{"protocol":"classic","quick":"yes","expect":"pass"}`, `x.json: field "quick": expected bool, got string`},
	{`{"protocol":"classic","expect":"maybe"}`, `x.json: field "expect": "maybe" is not pass, deadlock or an invariant classic checks (final-replay, no-duplicate-delivery, frontier-replay,`},
	{`{"protocol":"classic"}`, `x.json: field "expect": missing`},
	{`{"protocol":"classic","mutation":"gate-drops-boundary","expect":"pass"}`, `x.json: field "mutation": gate-drops-boundary does not apply to classic`},
	{`{"protocol":"dump","mutation":"claim-inside-uncertainty","expect":"pass"}`, `x.json: field "mode": mutation claim-inside-uncertainty needs mode "uncertain"`},
	{`{"protocol":"classic","initial":[1,9],"keys":2,"values":2,"expect":"pass"}`, `x.json: field "initial":`},
	{`{"protocol":"dump","mode":"fuzzy","expect":"pass"}`, `x.json: field "mode": "fuzzy" is not one of`},
	{`protocol: classic`, `x.json: not valid JSON at byte`},
	{`{"protocol":"classic","initial":"some","expect":"pass"}`, `x.json: field "initial": "some" is neither "any" nor a list of values`},
	{`{"protocol":"classic","initial":[1],"expect":"pass","keys":1,"values":0}`, `x.json: field "values": 0 is out of range`},
	// Issue 10, finding 2: properties the protocol does not check here.
	{`{"protocol":"dump","expect":"executed-set-membership"}`, `x.json: field "expect": dump does not check "executed-set-membership" under this configuration; expect pass, deadlock or one of: final-replay, no-duplicate-delivery, frontier-replay`},
	{`{"protocol":"readonly","expect":"single-read-point"}`, `x.json: field "expect": readonly does not check "single-read-point"`},
	{`{"protocol":"classic","only":["executed-set-membership"],"expect":"pass"}`, `x.json: field "only": classic does not check "executed-set-membership"`},
	{`{"protocol":"classic","only":["contract"],"expect":"frontier-replay"}`, `x.json: field "expect": "frontier-replay" must fail, but "only" leaves it unchecked`},
	// Issue 10, finding 3: strict input.
	{`{"protocol":"classic","expect":"pass"} trailing`, `x.json: unexpected data after the spec object at byte 38; a file holds exactly one spec`},
	{`{"protocol":"classic","expect":"pass"}{"protocol":"classic","expect":"pass"}`, `x.json: unexpected data after the spec object at byte 38`},
	{`{"PROTOCOL":"classic","expect":"pass"}`, `x.json: field "PROTOCOL": unknown field; field names are case-sensitive: did you mean "protocol"?`},
	{`{"protocol":"classic","Expect":"pass"}`, `x.json: field "Expect": unknown field; field names are case-sensitive: did you mean "expect"?`},
	{`{"protocol":"classic","expect":"pass","protocol":"dump"}`, `x.json: field "protocol": appears twice; give each field once`},
	{`{"protocol":"classic","keys":null,"expect":"pass"}`, `x.json: field "keys": null is not a value; leave the field out to take its default`},
	{``, `x.json: empty file; a spec is one JSON object, e.g. {"protocol": "classic", "expect": "pass"}`},
	{" \n\t", `x.json: empty file; a spec is one JSON object`},
	{`[{"protocol":"classic","expect":"pass"}]`, `x.json: found a JSON array; a spec is one JSON object`},
	{`"classic"`, `x.json: found a JSON string; a spec is one JSON object`},
	{`{"protocol":"classic","expect":"pass"`, `x.json: not valid JSON: the file ends before the spec object does`},
	{"{\"protocol\":\"classic\",\"expect\":\"pass\",\"a\\nb\":1}", `x.json: field "a\nb": unknown field`},
	// A fixed history (the source's first transactions) is checked against the bounds.
	{`{"protocol":"classic","keys":2,"values":2,"events":2,"txn":1,"expect":"pass","history":["k2=1"]}`, `field "history": transaction 1 writes k2, outside keys k0..k1`},
	{`{"protocol":"classic","keys":2,"values":2,"events":2,"txn":1,"expect":"pass","history":["k0=3"]}`, `field "history": transaction 1 writes k0 := 3, outside values 0..2 (0 = ⊥)`},
	{`{"protocol":"classic","keys":2,"values":2,"events":2,"txn":1,"expect":"pass","history":["k0=1","k1=1","k0=2"]}`, `field "history": 3 row events, more than events = 2`},
	{`{"protocol":"classic","keys":2,"values":2,"events":2,"txn":1,"expect":"pass","history":["k0=1 k1=1"]}`, `field "history": transaction 1 has more than txn = 1 rows`},
	{`{"protocol":"classic","keys":2,"values":2,"events":2,"txn":1,"expect":"pass","history":["k0=1","k0=1"]}`, `field "history": transaction 2 writes k0 := 1, its value already (a no-op write): set noops to allow it`},
	{`{"protocol":"classic","keys":2,"values":2,"events":2,"txn":1,"expect":"pass","history":["k1=0"]}`, `field "history": transaction 1 writes k1 := ⊥, its value already (a no-op write)`},
	{`{"protocol":"classic","keys":2,"values":2,"events":2,"txn":1,"expect":"pass","initial":"any","history":["k1=1"]}`, `field "history": transaction 1 writes k1 := 1, a no-op write over some base store of initial any: set noops`},
	{`{"protocol":"classic","keys":2,"values":2,"events":2,"txn":2,"expect":"pass","history":["k0=1,k0=2"]}`, `field "history": transaction 1 writes k0 twice (a transaction's rows are on distinct keys)`},
	{`{"protocol":"classic","keys":2,"values":2,"events":2,"txn":1,"expect":"pass","history":["k0=1",""]}`, `field "history": transaction 2 is empty (a transaction writes at least one row)`},
	{`{"protocol":"classic","keys":2,"values":2,"events":2,"txn":1,"expect":"pass","history":["a=1"]}`, `field "history": transaction 1: "a=1" is not a row such as k0=1 (a key, = and a value, 0 or ⊥ to delete)`},
	{`{"protocol":"classic","keys":2,"values":2,"events":2,"txn":1,"expect":"pass","history":"k0=1"}`, `field "history": expected []string, got string`},
	{`{"protocol":"classic","keys":2,"values":2,"events":2,"txn":1,"expect":"pass","history":["k0=1"],"symmetry":true}`, `field "symmetry": a fixed history names its values: no value renaming applies to it`},
	{`{"protocol":"classic","keys":2,"values":2,"events":2,"txn":1,"expect":"pass","onset":0}`, `field "onset": fixes the onset early-common-onset claims; give that mutation too`},
	{`{"protocol":"composite","keys":2,"values":2,"events":2,"chunks":2,"mode":"tablesync","mutation":"early-common-onset","expect":"pass","onset":2}`, `field "onset": c* = 2 is not below any frontier of a run of events = 2`},
	{`{"protocol":"composite","mutation":"early-common-onset","expect":"pass","onset":-1}`, `field "onset": -1 is not a coordinate (0..31)`},
}

// Reference: issue 10, findings 2 and 3. Bad spec files are one error of
// one line naming the file, the field and what would be valid.
func TestParseErrors(t *testing.T) {
	for _, tt := range badSpecs {
		_, err := Parse("specs/x.json", []byte(tt.body))
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "specs/x.json") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) = %v, want one line with %q", tt.body, err, tt.want)
		}
	}
}

// The known field names come from Spec's json tags, so a new field needs
// no change to the strictness checks.
func TestFieldsFromTags(t *testing.T) {
	if got := strings.Join(fieldNames(), ","); !strings.HasPrefix(got, "protocol,keys,values,events,chunks,txn,") || !strings.Contains(got, ",expect,") {
		t.Errorf("fieldNames() = %s", got)
	}
	for _, f := range fieldNames() {
		if _, err := Parse("x.json", []byte(`{"protocol":"classic","expect":"pass","`+strings.ToUpper(f)+`":1}`)); err == nil || !strings.Contains(err.Error(), "case-sensitive") {
			t.Errorf("%s in capitals: %v", f, err)
		}
	}
}

// A directory without spec files is an error, not an empty set.
func TestLoadEmpty(t *testing.T) {
	if _, err := Load(fstest.MapFS{"README.md": {Data: []byte("x")}}); err == nil || !strings.Contains(err.Error(), "no spec files") {
		t.Errorf("Load(no specs) = %v", err)
	}
	if _, err := Load(fstest.MapFS{"a.json": {Data: []byte(`{"protocol":"classic","expect":"pass"}`)}, "b.json": {Data: []byte(`{}`)}}); err == nil || !strings.HasPrefix(err.Error(), "b.json: ") {
		t.Errorf("Load(one bad) = %v", err)
	}
}

// Reference: issue 10, finding 8. Parse and Load never panic; a refused
// file gives one line naming it, and an accepted one resolves, expecting
// something its protocol checks.
func FuzzSpec(f *testing.F) {
	names, err := fs.Glob(embedded, "*.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, n := range names {
		data, err := fs.ReadFile(embedded, n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, tt := range badSpecs {
		f.Add([]byte(tt.body))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.json", data)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "fuzz.json: ") || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error is not one line naming the file: %q", msg)
			}
		} else {
			cfg, p, err := s.Config()
			if err != nil {
				t.Fatalf("parsed, but Config fails: %v", err)
			}
			if s.Expect != "pass" && s.Expect != "deadlock" && !slices.Contains(checkedBy(p, cfg), s.Expect) {
				t.Fatalf("accepted expect %q, which %s does not check", s.Expect, p.Name)
			}
		}
		list, lerr := Load(fstest.MapFS{"fuzz.json": {Data: data}})
		if (lerr == nil) != (err == nil) || lerr != nil && lerr.Error() != err.Error() || lerr == nil && len(list) != 1 {
			t.Fatalf("Load and Parse disagree: %v, %v", lerr, err)
		}
	})
}

// The kill matrix names a deadlock once, in its own column, and judges each
// invariant of a deadlocking mutation on its own: lost-watermark deadlocks
// and breaks nothing else, where the rows once read "deadlock" for every
// invariant.
func TestKillMatrixDeadlockOnce(t *testing.T) {
	data, err := embedded.ReadFile("mut-lost-watermark-classic.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("mut-lost-watermark-classic.json", data)
	if err != nil {
		t.Fatal(err)
	}
	cfg, p, _ := s.Config()
	ks, err := KillMatrix(context.Background(), []Outcome{{Spec: s, Config: cfg}}, explore.Options{Workers: 2}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 1 {
		t.Fatalf("%d rows", len(ks))
	}
	k := ks[0]
	invariants := len(checkedBy(p, cfg))
	if !k.Killed || !slices.Equal(k.Failing, []string{"deadlock"}) || len(k.Checked) != invariants+1 || k.Checked[invariants] != "deadlock" {
		t.Errorf("killed %v, failing %v, checked %v", k.Killed, k.Failing, k.Checked)
	}
	md := MatrixMarkdown(ks)
	row := md[strings.Index(md, "| mut-lost-watermark-classic"):]
	if strings.Count(md, "deadlock") != 2 || strings.Count(row, "✗") != 1 { // the column and the expectation, nothing more
		t.Errorf("matrix:\n%s", md)
	}
}

// A variant built with a fault of its own (a design expressed as a choice,
// protocols.Config.Fault in its defaults) shows it in the table's bounds,
// and the copy kill does not replace it with copy-dropped.
func TestVariantFaultVisible(t *testing.T) {
	p := protocols.Classic(protocols.ClassicParts{})
	p.Name, p.Defaults.Fault = "classic-early-visible", protocols.EarlyRelease
	if err := protocols.Register(p); err != nil {
		t.Fatal(err)
	}
	two := 2
	s := Spec{Name: "variant", Protocol: p.Name, Keys: &two, Values: &two, Events: &two, Expect: "pass"}
	cfg, _, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	rows := TableJSON([]Outcome{{Spec: s, Config: cfg}})
	if !strings.Contains(rows[0].Bounds, "fault=early-release") {
		t.Errorf("bounds %q hide the variant's fault", rows[0].Bounds)
	}
	ks, err := KillMatrix(context.Background(), []Outcome{{Spec: s, Config: cfg, Got: "pass", OK: true}}, explore.Options{Workers: 1}, nil, nil)
	if err != nil || len(ks) != 0 {
		t.Errorf("copy kill on a variant with its own fault: %v, %+v", err, ks)
	}
	s.Protocol = "classic" // the same spec on the published protocol gets its copy kill
	if cfg, _, err = s.Config(); err != nil {
		t.Fatal(err)
	}
	if ks, err := KillMatrix(context.Background(), []Outcome{{Spec: s, Config: cfg, Got: "pass", OK: true}}, explore.Options{Workers: 1}, nil, nil); err != nil || len(ks) != 1 || !ks[0].Killed {
		t.Errorf("copy kill on classic: %v, %+v", err, ks)
	}
	mut := Spec{Name: "mutated", Protocol: "classic", Keys: &two, Values: &two, Events: &two, Mutation: "early-release", Expect: "pass"}
	if cfg, _, err = mut.Config(); err != nil {
		t.Fatal(err)
	}
	if rows := TableJSON([]Outcome{{Spec: mut, Config: cfg}}); strings.Contains(rows[0].Bounds, "fault=") {
		t.Errorf("a mutated spec's bounds %q repeat its mutation", rows[0].Bounds)
	}
}
