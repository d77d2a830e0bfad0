package cli

import (
	"strings"
	"testing"
)

// --simulate finds a mutation's violation along random walks, says the
// trace is not necessarily shortest, and the same seed gives the same
// output; finding nothing exits 4, since a simulation proves nothing.
func TestCheckSimulate(t *testing.T) {
	args := []string{"check", "classic", "--mutation", "early-release", "--progress", "0", "--simulate", "--seed", "1", "--walks", "200", "--depth", "40"}
	code, out, stderr := runCLI(args...)
	if code != exitViolated || !strings.Contains(out, "not necessarily shortest") || !strings.Contains(out, "Counterexample") || !strings.Contains(out, "\nviolated: ") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	trace := func(s string) string { return s[strings.Index(s, "Counterexample"):] }
	if _, again, _ := runCLI(args...); trace(again) != trace(out) {
		t.Errorf("the same seed gave another trace:\n%s\n%s", trace(out), trace(again))
	}
	code, out, _ = runCLI("check", "classic", "--progress", "0", "--simulate", "--walks", "20", "--depth", "10")
	if code != exitIncomplete || !strings.Contains(out, "no violation found") {
		t.Errorf("correct protocol: exit %d\n%s", code, out)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "classic", "--seed", "3"}, "--seed needs --simulate"},
		{[]string{"check", "classic", "--simulate", "--depth", "0"}, "--depth must be ≥ 1"},
		{[]string{"check", "classic", "--simulate", "--shard", "0/2"}, "cannot be combined with --shard"},
	} {
		code, _, stderr := runCLI(tt.args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d %q, want %q", tt.args, code, stderr, tt.want)
		}
	}
}
