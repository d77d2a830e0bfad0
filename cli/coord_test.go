package cli

import (
	"regexp"
	"strings"
	"testing"
)

// Reference: Def. 2.1. --coord-base starts the log's positions at its
// value: the counts are those of 1, the trace names positions from the
// base; a value that is not a first position is one usage line (exit 2).
func TestCheckCoordBase(t *testing.T) {
	args := []string{"check", "parallel", "--keys", "1", "--events", "3", "--chunks", "1", "--txn", "1",
		"--mutation", "reader-before-backfill", "--progress", "0"}
	counts := regexp.MustCompile(`(?m)^(generated|distinct|depth): .*$`)
	code, plain, stderr := runCLI(args...)
	if code != exitViolated {
		t.Fatalf("base 1: exit %d\n%s%s", code, plain, stderr)
	}
	code, based, stderr := runCLI(append(args, "--coord-base", "254")...)
	if code != exitViolated || !strings.Contains(based, "coord-base=254") || !strings.Contains(based, "commits k0 := 1 at position 254") {
		t.Errorf("base 254: exit %d\n%s%s", code, based, stderr)
	}
	if a, b := counts.FindAllString(plain, -1), counts.FindAllString(based, -1); len(a) != 3 || strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("counts differ: %q, %q", a, b)
	}
	for _, bad := range []string{"0", "-3", "65537"} {
		code, _, stderr := runCLI(append(args, "--coord-base", bad)...)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--coord-base: "+bad+" is not a first position (1..65536)") {
			t.Errorf("--coord-base %s: exit %d, stderr %q", bad, code, stderr)
		}
	}
}
