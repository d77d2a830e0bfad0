package specs

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
)

// The open disciplines' table lists only their specs, with the class of the
// failing invariant and the counterexample's length from the run itself.
func TestOpenMarkdown(t *testing.T) {
	mut, err := Parse("open-x.json", []byte(`{"protocol": "parallel", "keys": 2, "values": 2, "events": 2, "chunks": 1, "txn": 1,
		"mutation": "gate-passes-high", "expect": "no-duplicate-delivery", "note": "the obligation"}`))
	if err != nil {
		t.Fatal(err)
	}
	other, err := Parse("classic-x.json", []byte(`{"protocol": "classic", "keys": 1, "values": 1, "events": 1, "chunks": 1, "txn": 1, "expect": "pass"}`))
	if err != nil {
		t.Fatal(err)
	}
	var out []Outcome
	for _, s := range []Spec{mut, other} {
		o, err := Run(context.Background(), s, explore.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	md := OpenMarkdown(out)
	steps := len(out[0].Report.Violation.Steps) - 1
	if steps < 1 || strings.Contains(md, "classic-x") || !strings.Contains(md, "| open-x | parallel |") ||
		!strings.Contains(md, "| the obligation | no-duplicate-delivery | no-duplicate-delivery | delivery |") ||
		!strings.Contains(md, " "+strconv.Itoa(steps)+" | yes |") {
		t.Fatalf("open table (trace of %d steps):\n%s", steps, md)
	}
	if OpenMarkdown(out[1:]) != "" {
		t.Fatal("a run without open specs should have no open table")
	}
}

// A results row carries its search's identity: the one Spec.Identity
// gives, different for another mutation or other options.
func TestRowIdentity(t *testing.T) {
	plain, err := Parse("a.json", []byte(`{"protocol": "classic", "keys": 1, "values": 1, "events": 1, "chunks": 1, "txn": 1, "expect": "pass"}`))
	if err != nil {
		t.Fatal(err)
	}
	mutated, err := Parse("b.json", []byte(`{"protocol": "classic", "keys": 1, "values": 1, "events": 1, "chunks": 1, "txn": 1, "mutation": "early-release", "expect": "pass"}`))
	if err != nil {
		t.Fatal(err)
	}
	opts := explore.Options{Workers: 1}
	o, err := Run(context.Background(), plain, opts)
	if err != nil {
		t.Fatal(err)
	}
	row := TableJSON([]Outcome{o})[0]
	want, err := plain.Identity(opts)
	if err != nil || row.Identity.Fingerprint() != want.Fingerprint() {
		t.Fatalf("row identity %v, spec's %v (%v)", row.Identity, want, err)
	}
	for name, v := range map[string]string{"protocol": "classic", "mutation": "none", "keys": "1", "build": explore.BuildIdentity()} {
		if got, _ := row.Identity.Get(name); got != v {
			t.Errorf("identity field %s = %q, want %q", name, got, v)
		}
	}
	// The source's fixed history, no-op writes and a fixed onset are part of it.
	for _, extra := range []string{`"history": ["k0=1"]`, `"noops": true`} {
		s, err := Parse("c.json", []byte(`{"protocol": "classic", "keys": 1, "values": 1, "events": 1, "chunks": 1, "txn": 1, "expect": "pass", `+extra+`}`))
		if err != nil {
			t.Fatal(err)
		}
		if id, _ := s.Identity(opts); id.Fingerprint() == want.Fingerprint() {
			t.Errorf("%s: the same identity as without it", extra)
		}
	}
	onsets := map[string]bool{}
	for _, extra := range []string{``, `"onset": 0, `, `"onset": 1, `} {
		s, err := Parse("d.json", []byte(`{"protocol": "composite", "keys": 2, "values": 2, "events": 2, "chunks": 2, "mode": "tablesync", "mutation": "early-common-onset", `+extra+`"expect": "latest-high-trajectory"}`))
		if err != nil {
			t.Fatal(err)
		}
		id, _ := s.Identity(opts)
		onsets[id.Fingerprint()] = true
	}
	if len(onsets) != 3 {
		t.Error("a fixed onset does not change the identity")
	}
	h1, _ := Parse("e.json", []byte(`{"protocol": "classic", "keys": 2, "values": 2, "events": 2, "txn": 1, "expect": "pass", "history": ["k0=1", "k1=2"]}`))
	h2, _ := Parse("e.json", []byte(`{"protocol": "classic", "keys": 2, "values": 2, "events": 2, "txn": 1, "expect": "pass", "history": ["k0=1", "k1=1"]}`))
	id1, _ := h1.Identity(opts)
	id2, _ := h2.Identity(opts)
	if field, _, _, differ := id1.Diff(id2); field != "history" || !differ {
		t.Errorf("two histories differ first in %q (%v)", field, differ)
	}
	if v, _ := id1.Get("history"); v != "k0=1; k1=2" {
		t.Errorf("history field %q", v)
	}
	other, _ := mutated.Identity(opts)
	noDeadlock, _ := plain.Identity(explore.Options{NoDeadlock: true})
	if other.Fingerprint() == want.Fingerprint() || noDeadlock.Fingerprint() == want.Fingerprint() {
		t.Error("another mutation or other options give the same identity")
	}
}
