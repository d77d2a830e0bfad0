package specs

import (
	"context"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
)

// Reference: §6, Def. 6.1; §6.5 version-max. A spec's sink names the rule;
// the rule is part of the search identity, except the default, whose
// identity is the one every earlier run recorded.
func TestSpecSink(t *testing.T) {
	base := Spec{Name: "x", Protocol: "parallel", Keys: ptr(2), Events: ptr(3), Chunks: ptr(1), Mutation: "reader-before-backfill",
		Only: []string{"final-replay"}, Expect: "final-replay"}
	vmax, lww := base, base
	vmax.Sink, vmax.Expect = "version-max", "pass"
	lww.Sink = "last-writer-wins"
	for _, s := range []Spec{base, vmax, lww} {
		o, err := Run(context.Background(), s, explore.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !o.OK {
			t.Errorf("sink %q: %s", s.Sink, o.Why)
		}
	}
	id := func(s Spec) explore.Identity {
		i, err := s.Identity(explore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	if _, ok := id(base).Get("sink"); ok {
		t.Errorf("the default rule adds a field to the identity")
	}
	if id(lww).Fingerprint() != id(base).Fingerprint() {
		t.Errorf("naming the default rule changes the identity")
	}
	if v, _ := id(vmax).Get("sink"); v != "version-max" {
		t.Errorf("version-max: identity field sink = %q", v)
	}
	bad := base
	bad.Sink = "newest"
	if _, _, err := bad.Config(); err == nil || !strings.Contains(err.Error(), `field "sink": unknown sink rule "newest"`) {
		t.Errorf("an unknown rule: %v", err)
	}
}

func ptr(n int) *int { return &n }
