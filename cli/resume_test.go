package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
)

// A check stopped at a depth limit with --resume, then run again without
// the limit, ends with the report of a run never stopped (all but time),
// for a passing and a failing spec.
func TestCheckResume(t *testing.T) {
	for _, extra := range [][]string{nil, {"--mutation", "early-release"}} {
		base := append([]string{"check", "classic", "--keys", "2", "--values", "2", "--events", "2", "--chunks", "2", "--txn", "1", "--progress", "0"}, extra...)
		dir := t.TempDir()
		report := func(name string, args ...string) (int, explore.Report) {
			file := filepath.Join(dir, name)
			code, out, stderr := runCLI(append(append(slices.Clone(base), args...), "--json", file)...)
			var rep explore.Report
			data, err := os.ReadFile(file)
			if err != nil || json.Unmarshal(data, &rep) != nil {
				t.Fatalf("%v: exit %d %v\n%s%s", args, code, err, out, stderr)
			}
			rep.Stats.Elapsed, rep.Stats.OnDisk = 0, false
			return code, rep
		}
		wantCode, want := report("plain.json")
		ckdir := filepath.Join(dir, "tier")
		if code, _ := report("stopped.json", "--dir", ckdir, "--resume", "--max-depth", "3"); code != exitIncomplete {
			t.Fatalf("stopped run: exit %d", code)
		}
		if _, err := os.Stat(filepath.Join(ckdir, "checkpoint", "meta.json")); err != nil {
			t.Fatalf("no checkpoint: %v", err)
		}
		code, got := report("resumed.json", "--dir", ckdir, "--resume")
		if code != wantCode || !reflect.DeepEqual(got, want) {
			t.Errorf("%v: resumed exit %d %+v\nuninterrupted exit %d %+v", extra, code, got, wantCode, want)
		}
	}
	code, _, stderr := runCLI("check", "classic", "--resume")
	if code != exitUsage || !strings.Contains(stderr, "--resume needs --dir") {
		t.Errorf("--resume without --dir: %d %q", code, stderr)
	}
}
