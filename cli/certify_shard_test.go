package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// certifyParts runs the n parts of a split verification of args under
// dir and returns their exit codes.
func certifyParts(t *testing.T, dir string, n int, args ...string) []int {
	t.Helper()
	var codes []int
	for i := range n {
		code, out, errs := runCLI(append([]string{"certify", "--shard", strconv.Itoa(i) + "/" + strconv.Itoa(n), "--shard-dir", dir}, args...)...)
		if code != exitOK && code != exitViolated && code != exitUnsupported || !strings.Contains(out, "part result: ") {
			t.Fatalf("part %d/%d: code %d out %q err %q", i, n, code, out, errs)
		}
		codes = append(codes, code)
	}
	return codes
}

// certify --shard and merge: the parts of a recording, merged, print the
// whole verification's line and exit with its code (an Accept, an O2
// Reject from the Debezium converter's path, a scope narrower than
// required); parts of two bundles under one directory, a part missing or
// edited, and part flags that cannot split are refused.
// Reference: README "Certifying a recording too big for one machine".
func TestCertifySplit(t *testing.T) {
	dir := t.TempDir()
	bundle := filepath.Join(dir, "run.jsonl")
	if code, _, errs := runCLI("certify", "--from", "debezium", "--table", "customers", "--notifications", notifications, "--write-bundle", bundle, sample); code != exitOK {
		t.Fatalf("bundle: %d %s", code, errs)
	}
	stale := "../certify/testdata/debezium-customers-stale.jsonl"
	for _, c := range []struct {
		name string
		args []string
	}{
		{"bundle", []string{bundle}},
		{"stale", []string{"--from", "debezium", "--table", "customers", stale}},
		{"required", []string{"--require-scope", "range=..9", "--from", "debezium", "--table", "customers", sample}},
	} {
		wholeCode, whole, _ := runCLI(append([]string{"certify"}, c.args...)...)
		for _, n := range []int{1, 2, 3} {
			parts := filepath.Join(dir, c.name+strconv.Itoa(n))
			certifyParts(t, parts, n, c.args...)
			code, out, errs := runCLI("merge", parts)
			line := out[strings.Index(out, "\n")+1:]
			if code != wholeCode || line != whole {
				t.Errorf("%s, %d parts: merged %d %q (%s), whole %d %q", c.name, n, code, line, errs, wholeCode, whole)
			}
		}
	}
	// Two bundles' parts under one --shard-dir: merge one directory.
	mixed := filepath.Join(dir, "mixed")
	certifyParts(t, mixed, 2, bundle)
	certifyParts(t, mixed, 2, "--from", "debezium", "--table", "customers", stale)
	if code, _, errs := runCLI("merge", mixed); code != exitUsage || !strings.Contains(errs, "parts of 2 bundles") {
		t.Errorf("mixed: code %d err %q", code, errs)
	}
	subs, _ := filepath.Glob(filepath.Join(mixed, "certify-*"))
	one := subs[0]
	os.Remove(filepath.Join(one, "part-1-of-2.json"))
	if code, _, errs := runCLI("merge", one); code != exitUsage || !strings.Contains(errs, "1 of a split into 2") {
		t.Errorf("missing: code %d err %q", code, errs)
	}
	other := subs[1]
	cut, _ := os.ReadFile(filepath.Join(other, "part-0-of-2.expected"))
	os.WriteFile(filepath.Join(other, "part-0-of-2.expected"), append(cut, 0), 0o644)
	if code, _, errs := runCLI("merge", other); code != exitUsage || !strings.Contains(errs, "not the one it wrote") {
		t.Errorf("edited stream: code %d err %q", code, errs)
	}
	js := filepath.Join(other, "part-1-of-2.json")
	b, _ := os.ReadFile(js)
	os.WriteFile(js, []byte(strings.Replace(string(b), `"lines": `, `"lines": 1`, 1)), 0o644)
	if code, _, errs := runCLI("merge", other); code != exitUsage || !strings.Contains(errs, "damaged or edited") {
		t.Errorf("edited part: code %d err %q", code, errs)
	}
	for _, bad := range [][]string{{"--shard", "3/3"}, {"--shard", "merge/2"}, {"--shard", "0/2", "--scope", "range=1..3"}, {"--shard", "auto/2"}} {
		code, _, errs := runCLI(append(append([]string{"certify"}, bad...), "--shard-dir", dir, bundle)...)
		if code != exitUsage || strings.Count(errs, "\n") > 2 || !strings.Contains(errs, "--shard") {
			t.Errorf("%v: code %d err %q", bad, code, errs)
		}
	}
}
