package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = "../certify/testdata/debezium-customers.jsonl"

// Reference: 003 §8.5: the verdict line and its exit code.
func TestCertifyCommand(t *testing.T) {
	dir := t.TempDir()
	bundle := filepath.Join(dir, "run.jsonl")
	code, out, errs := runCLI("certify", "--from", "debezium", "--table", "customers", "--write-bundle", bundle, sample)
	if code != exitOK || !strings.HasPrefix(out, "Accept: virtual cut at frontier 9") {
		t.Fatalf("code %d out %q err %q", code, out, errs)
	}
	// The written bundle certifies on its own, and advances by a segment.
	if code, out, _ := runCLI("certify", bundle); code != exitOK || !strings.HasPrefix(out, "Accept") {
		t.Fatalf("bundle: code %d out %q", code, out)
	}
	seg := filepath.Join(dir, "seg.jsonl")
	os.WriteFile(seg, []byte(`{"format":"cutcheck-segment","version":1,"from":9,"to":11}`+"\n"+`{"p":10,"k":4,"v":null}`+"\n"+`{"p":11,"k":5,"v":{"id":5}}`+"\n"), 0o644)
	code, out, _ = runCLI("certify", "--advance", seg, "--json", bundle)
	var res struct {
		Verdict string
		Cut     struct {
			Frontier int64
			Present  int
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitOK || res.Verdict != "Accept" || res.Cut.Frontier != 11 || res.Cut.Present != 3 {
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
