package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
)

// --history fixes the source's first transactions as a spec's "history"
// does, --onset the claimed c*: check reproduces Prop 2's instance (exit 1,
// violated), and a history the bounds cannot hold is one line of usage
// error (exit 2).
func TestCheckHistory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.json")
	paper := []string{"check", "composite", "--keys", "2", "--values", "2", "--events", "2", "--chunks", "2", "--txn", "1", "--mode", "tablesync", "--mutation", "early-common-onset", "--history", "k0=1; k1=2", "--onset", "1", "--json", file}
	code, stdout, stderr := runCLI(paper...)
	if code != exitViolated || !strings.Contains(stdout, "history=k0=1; k1=2 onset=1") || !strings.Contains(stdout, "splice chunk 2 (per-table dump) {k1} at recorded r = 2: k1=2") || !strings.Contains(stdout, "at g = 1 key k1 has sink 2, expected σ_1 = ⊥") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	// The history and the onset are part of the search identity.
	var rep explore.Report
	if data, err := os.ReadFile(file); err != nil || json.Unmarshal(data, &rep) != nil {
		t.Fatalf("%v", err)
	}
	for name, want := range map[string]string{"history": "k0=1; k1=2", "onset": "1"} {
		if got, _ := rep.Identity.Get(name); got != want {
			t.Errorf("identity %s = %q, want %q", name, got, want)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "classic", "--keys", "2", "--history", "k0=1; k2=1"}, "history: transaction 2 writes k2, outside keys k0..k1"},
		{[]string{"check", "classic", "--history", "k0=1;"}, "--history: transaction 2 is empty"},
		{[]string{"check", "classic", "--history", "k0"}, `--history: transaction 1: "k0" is not a row such as k0=1`},
		{[]string{"check", "classic", "--keys", "2", "--values", "2", "--history", "k0=1", "--symmetry"}, "--symmetry: a fixed history names its values"},
		{[]string{"check", "classic", "--onset", "0"}, "onset: fixes the onset early-common-onset claims"},
	} {
		code, stdout, stderr := runCLI(tt.args...)
		if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tt.args, code, stdout, stderr)
		}
	}
}
