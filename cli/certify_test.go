package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	sample        = "../certify/testdata/debezium-customers.jsonl"
	notifications = "../certify/testdata/debezium-customers.notifications.jsonl"
)

// Reference: 003 §8.5: the verdict line and its exit code.
func TestCertifyCommand(t *testing.T) {
	dir := t.TempDir()
	bundle := filepath.Join(dir, "run.jsonl")
	code, out, errs := runCLI("certify", "--from", "debezium", "--table", "customers", "--notifications", notifications, "--write-bundle", bundle, sample)
	if code != exitOK || !strings.HasPrefix(out, "Accept: virtual cut at frontier 12 on scope [−∞, +∞) (3 keys present") || errs != "" {
		t.Fatalf("code %d out %q err %q", code, out, errs)
	}
	// The written bundle certifies on its own, and advances by a segment.
	if code, out, _ := runCLI("certify", bundle); code != exitOK || !strings.HasPrefix(out, "Accept") {
		t.Fatalf("bundle: code %d out %q", code, out)
	}
	seg := filepath.Join(dir, "seg.jsonl")
	os.WriteFile(seg, []byte(`{"format":"cutcheck-segment","version":1,"from":12,"to":14}`+"\n"+`{"p":13,"k":4,"v":null}`+"\n"+`{"p":14,"k":5,"v":{"id":5}}`+"\n"), 0o644)
	code, out, _ = runCLI("certify", "--advance", seg, "--json", bundle)
	var res struct {
		Verdict string
		Cut     struct {
			Frontier int64
			Present  int
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitOK || res.Verdict != "Accept" || res.Cut.Frontier != 14 || res.Cut.Present != 3 {
		t.Fatalf("advance: code %d %+v %v\n%s", code, res, err, out)
	}
	if code, out, _ := runCLI("certify", "--scope", "range=1..3", bundle); code != exitOK || !strings.Contains(out, "2 keys present") {
		t.Errorf("restricted: code %d out %q", code, out)
	}
	code, out, _ = runCLI("certify", "--from", "debezium", "--table", "customers", "../certify/testdata/debezium-customers-stale.jsonl")
	if code != exitViolated || !strings.HasPrefix(out, "Reject: S4 (O2") {
		t.Errorf("stale: code %d out %q", code, out)
	}
	b, _ := os.ReadFile(bundle)
	os.WriteFile(bundle, []byte(strings.Replace(string(b), `"version":1`, `"version":9`, 1)), 0o644)
	if code, out, _ := runCLI("certify", bundle); code != exitUnsupported || !strings.HasPrefix(out, "Unsupported") {
		t.Errorf("unknown version: code %d out %q", code, out)
	}
	if code, _, errs := runCLI("certify", filepath.Join(dir, "missing")); code != exitUsage || errs == "" {
		t.Errorf("missing file: code %d", code)
	}
	if code, _, _ := runCLI("certify"); code != exitUsage {
		t.Errorf("no file: code %d", code)
	}
	if code, _, _ := runCLI("certify", "--from", "oracle", bundle); code != exitUsage {
		t.Errorf("unknown format: code %d", code)
	}
}

// Reference: FORMAT.md "From Debezium": without evidence of the chunk ends
// and the maximum key, the converter certifies the scope the recording
// determines and says what it left out; a recording without a window is
// Unsupported; bad converter flags are usage errors.
func TestCertifyDebeziumEvidence(t *testing.T) {
	code, out, errs := runCLI("certify", "--from", "debezium", "--table", "customers", sample)
	if code != exitOK || !strings.Contains(out, "scope [−∞, 3) ∪ [4, 5)") ||
		!strings.Contains(errs, "cutcheck certify: keys strictly between 2 and 4 are not certified") || !strings.Contains(errs, "cutcheck certify: keys above 4 are not certified") {
		t.Errorf("no bounds: code %d out %q err %q", code, out, errs)
	}
	code, out, errs = runCLI("certify", "--from", "debezium", "--chunk-bounds", "[2,4,null]", "--max-key", "4", sample)
	if code != exitOK || !strings.Contains(out, "scope [−∞, +∞)") || errs != "" {
		t.Errorf("stated bounds: code %d out %q err %q", code, out, errs)
	}
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.jsonl")
	os.WriteFile(plain, []byte(`{"before":null,"after":{"id":1},"op":"c","source":{"connector":"postgresql","table":"customers","sequence":"[\"1\",\"2\"]"}}`+"\n"), 0o644)
	if code, out, _ := runCLI("certify", "--from", "debezium", plain); code != exitUnsupported || !strings.HasPrefix(out, "Unsupported") {
		t.Errorf("no window: code %d out %q", code, out)
	}
	if code, _, errs := runCLI("certify", "--from", "debezium", "--notifications", filepath.Join(dir, "missing"), sample); code != exitError || errs == "" {
		t.Errorf("missing notifications: code %d", code)
	}
	for _, bad := range [][]string{{"--chunk-bounds", "2,4"}, {"--max-key", "{"}, {"--key", "a,"}} {
		if code, _, _ := runCLI(append(append([]string{"certify", "--from", "debezium"}, bad...), sample)...); code != exitUsage {
			t.Errorf("%v: code %d", bad, code)
		}
	}
}

// --mem is a size of at least 128MiB; the spill directory under --dir is
// gone when the run ends.
func TestCertifyMem(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []string{"1k", "lots", "0"} {
		code, _, errs := runCLI("certify", "--mem", bad, sample)
		if code != exitUsage || strings.Count(errs, "\n") > 2 || !strings.Contains(errs, "--mem") {
			t.Errorf("--mem %s: code %d err %q", bad, code, errs)
		}
	}
	code, out, _ := runCLI("certify", "--mem", "128MiB", "--dir", dir, "--from", "debezium", "--table", "customers", "--notifications", notifications, sample)
	if code != exitOK || !strings.HasPrefix(out, "Accept") {
		t.Fatalf("code %d out %q", code, out)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("left in --dir: %v", left)
	}
}
