package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Reference: §6, Def. 6.1; §6.5 version-max. --sink and the spec field sink
// pick the sink's merge rule: a version-max sink repairs the reorder of
// reader-before-backfill at rest; a rule that does not exist is one usage
// line (exit 2).
func TestCheckSink(t *testing.T) {
	args := []string{"check", "parallel", "--keys", "2", "--events", "3", "--chunks", "1",
		"--mutation", "reader-before-backfill", "--only", "final-replay", "--progress", "0"}
	if code, out, stderr := runCLI(args...); code != exitViolated {
		t.Errorf("last-writer-wins: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, stderr := runCLI(append(args, "--sink", "version-max")...); code != exitOK || !strings.Contains(out, "sink=version-max") {
		t.Errorf("version-max: exit %d\n%s%s", code, out, stderr)
	}
	code, _, stderr := runCLI(append(args, "--sink", "newest")...)
	if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, `--sink: unknown sink rule "newest" (known: last-writer-wins, version-max, insert-ignore, upsert-only)`) {
		t.Errorf("unknown rule: exit %d, stderr %q", code, stderr)
	}
	dir := t.TempDir()
	for name, body := range map[string]string{
		"vmax.json": `{"protocol":"parallel","keys":2,"events":3,"chunks":1,"mutation":"reader-before-backfill","only":["final-replay"],"sink":"version-max","expect":"pass"}`,
		"bad.json":  `{"protocol":"parallel","sink":"newest","expect":"pass"}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, out, stderr := runCLI("run", "--progress", "0", filepath.Join(dir, "vmax.json")); code != exitOK {
		t.Errorf("spec with sink: exit %d\n%s%s", code, out, stderr)
	}
	code, _, stderr = runCLI("run", filepath.Join(dir, "bad.json"))
	if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, `field "sink": unknown sink rule "newest"`) {
		t.Errorf("spec with an unknown rule: exit %d, stderr %q", code, stderr)
	}
}
