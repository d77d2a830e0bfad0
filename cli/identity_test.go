package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
)

// check --json prints the search's identity: the build, the protocol, every
// bound, the mutation and the options, with its fingerprint.
func TestCheckJSONIdentity(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.json")
	code, out, stderr := runCLI("check", "classic", "--keys", "1", "--values", "1", "--events", "1", "--chunks", "1", "--txn", "1",
		"--mutation", "early-release", "--no-deadlock", "--progress", "0", "--json", file)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("exit %d %v\n%s%s", code, err, out, stderr)
	}
	var raw struct {
		Identity struct {
			Fingerprint string `json:"fingerprint"`
		} `json:"identity"`
	}
	var rep explore.Report
	if err := json.Unmarshal(data, &raw); err != nil || json.Unmarshal(data, &rep) != nil {
		t.Fatal(err)
	}
	if raw.Identity.Fingerprint == "" || raw.Identity.Fingerprint != rep.Identity.Fingerprint() {
		t.Fatalf("fingerprint %q, fields %v", raw.Identity.Fingerprint, rep.Identity)
	}
	for name, want := range map[string]string{"build": explore.BuildIdentity(), "protocol": "classic", "keys": "1", "mutation": "early-release", "deadlock": "false", "max-depth": "0"} {
		if got, ok := rep.Identity.Get(name); !ok || got != want {
			t.Errorf("identity %s = %q, want %q (%v)", name, got, want, rep.Identity)
		}
	}
	if !strings.Contains(explore.BuildIdentity(), " exe ") && !strings.Contains(explore.BuildIdentity(), " rev ") {
		t.Errorf("build identity %q names neither a revision nor the executable", explore.BuildIdentity())
	}
}
