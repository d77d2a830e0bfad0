package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// check --all explores once and reports every invariant, opt-in ones too,
// worst class first, with each failing one's shortest counterexample in
// text, JSON and the picture; a plain check names what it did not check.
func TestCheckAll(t *testing.T) {
	small := []string{"--keys", "2", "--values", "1", "--events", "2", "--chunks", "2", "--progress", "0"}
	code, out, stderr := runCLI(append([]string{"check", "parallel"}, small...)...)
	if code != exitOK || !strings.Contains(out, "unchecked:   no-duplicate-delivery") || !strings.Contains(out, "--all") {
		t.Errorf("plain check: exit %d, want the opt-in property named as unchecked\n%s%s", code, out, stderr)
	}
	dir := t.TempDir()
	js, html := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")
	code, out, stderr = runCLI(append([]string{"check", "parallel", "--mutation", "window-only-withholding", "--all", "--json", js, "--html", html}, small...)...)
	if code != exitViolated {
		t.Fatalf("--all: exit %d\n%s%s", code, out, stderr)
	}
	for _, want := range []string{
		"final-replay            final      VIOLATED in 12 steps",
		"closed-unit-cut         transient  VIOLATED in 11 steps",
		"committed-only          transient  holds",
		"no-duplicate-delivery   delivery   holds",
		"Counterexample for final-replay (12 steps)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("--all output lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "Counterexample for final-replay") > strings.Index(out, "Counterexample for closed-unit-cut") {
		t.Errorf("--all: the final failure should come before the transient ones:\n%s", out)
	}
	var rep struct {
		Violations []struct{ Property, Class string } `json:"violations"`
	}
	if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &rep) != nil || len(rep.Violations) != 5 || rep.Violations[0].Property != "final-replay" || rep.Violations[3].Class != "transient" ||
		rep.Violations[4].Property != "exact-emission" || rep.Violations[4].Class != "claim" {
		t.Errorf("--json: %v, violations %+v", err, rep.Violations)
	}
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), `id="consequences"`) || !strings.Contains(string(b), "per-key-monotonicity") {
		t.Errorf("--html: %v; want the table of consequences", err)
	}
	// The opt-in delivery class is checked too: the gate that also passes
	// the event at the high offset fails it alone.
	if code, out, _ := runCLI(append([]string{"check", "parallel", "--mutation", "gate-passes-high", "--all"}, small...)...); code != exitViolated ||
		!strings.Contains(out, "no-duplicate-delivery   delivery   VIOLATED in 10 steps") || !strings.Contains(out, "final-replay            final      holds") {
		t.Errorf("--all gate-passes-high: exit %d\n%s", code, out)
	}
	if code, _, stderr := runCLI(append([]string{"check", "parallel", "--all", "--shard", "0/2"}, small...)...); code != exitUsage || !strings.Contains(stderr, "--all") {
		t.Errorf("--all --shard: exit %d %s", code, stderr)
	}
}
