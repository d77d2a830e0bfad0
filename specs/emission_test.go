package specs

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
)

// Reference: Def. 6.2–6.4, §6.5 — the emission specs (quick but for
// key-range gating's, whose capture drops no copy to kill) pass
// exact-emission on a non-trivial stream (emission-judged reached), and
// cover every shipped protocol and mode and every open discipline that
// declares it; the redundant-copy specs fail it.
func TestEmissionSpecs(t *testing.T) {
	all, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	killed := 0
	for _, s := range all {
		emission := strings.HasPrefix(s.Name, "emission-") || strings.HasPrefix(s.Name, OpenPrefix+"emission-")
		if !emission && s.Expect != "exact-emission" || !slices.Contains(s.With, "exact-emission") && s.Expect != "exact-emission" {
			continue
		}
		o, err := Run(context.Background(), s, explore.Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if !o.OK {
			t.Errorf("%s: %s", s.Name, o.Why)
			continue
		}
		if s.Expect == "exact-emission" {
			killed++
			continue
		}
		judged := false
		for _, r := range o.Report.Sometimes {
			judged = judged || r.Name == "emission-judged" && r.Reached
		}
		if !judged {
			t.Errorf("%s: emission-judged unreached", s.Name)
		}
		covered[s.Protocol+" "+o.Config.Mode] = true
	}
	for _, want := range []string{"classic ", "readonly ", "parallel ", "dump trusted", "dump uncertain", "composite mixed",
		"composite tablesync", "keyrange advancing", "reread fresh", "rewind preimage"} {
		if !covered[want] {
			t.Errorf("no quick spec checks exact-emission on %s", want)
		}
	}
	if killed < 2 {
		t.Errorf("%d specs kill with exact-emission, want the two redundant-copy ones", killed)
	}
}
