package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/specs"
)

// TestMain lets the tests run this binary as the cutcheck command, in
// separate processes, as a batch engine would.
func TestMain(m *testing.M) {
	if os.Getenv("CUTCHECK_AS_COMMAND") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// asProcess runs cutcheck in its own process.
func asProcess(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "CUTCHECK_AS_COMMAND=1")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// Reference: explore/shard.go — a spec split into N shards, each run as a
// separate process, merges into exactly the single run: distinct,
// generated, depth, queue peak, coverage, sometimes-properties, verdict and
// the same shortest counterexample; for every shipped protocol at two
// bounds, a mutated spec and four specs of the open disciplines, N = 1, 2,
// 4, 7.
func TestShardsAsProcesses(t *testing.T) {
	files := []string{"mut-late-start-classic.json",
		// the open disciplines (§6.5), passing and failing
		"open-rewind-preimage.json", "open-reread-racing.json", "open-versionmax-client.json", "open-keyrange-nonmonotone.json"}
	for _, p := range []string{"classic", "readonly", "parallel", "dump", "composite"} {
		files = append(files, p+"-1.json", p+"-2.json")
	}
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join("..", "specs", file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s, err := specs.Parse(path, data)
			if err != nil {
				t.Fatal(err)
			}
			single, err := specs.Run(context.Background(), s, explore.Options{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{1, 2, 4, 7} {
				dir := t.TempDir()
				var wg sync.WaitGroup
				codes := make([]int, n)
				outs := make([]string, n)
				for i := range n {
					wg.Go(func() {
						codes[i], outs[i] = asProcess(t, "run", path, "--shard", fmt.Sprintf("%d/%d", i, n), "--shard-dir", dir, "--workers", "1", "--progress", "0")
					})
				}
				wg.Wait()
				for i := range n {
					if codes[i] != exitOK {
						t.Fatalf("shard %d/%d: exit %d\n%s", i, n, codes[i], outs[i])
					}
				}
				merged := filepath.Join(dir, "merged.json")
				code, out := asProcess(t, "merge", dir, "--json", merged)
				if want := map[bool]int{true: exitOK, false: exitViolated}[single.OK]; code != want {
					t.Fatalf("merge of %d: exit %d, want %d\n%s", n, code, want, out)
				}
				var got explore.Report
				raw, err := os.ReadFile(merged)
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(raw, &got); err != nil {
					t.Fatal(err)
				}
				want := single.Report
				g, w := got.Stats, want.Stats
				if got.VerdictName != want.VerdictName || g.Distinct != w.Distinct || g.Generated != w.Generated || g.Depth != w.Depth || g.QueuePeak != w.QueuePeak {
					t.Errorf("%d shards: %s %+v; single run %s %+v", n, got.VerdictName, g, want.VerdictName, w)
				}
				if !slices.Equal(got.Coverage, want.Coverage) || !slices.Equal(got.Sometimes, want.Sometimes) {
					t.Errorf("%d shards: coverage %v sometimes %v; single run %v %v", n, got.Coverage, got.Sometimes, want.Coverage, want.Sometimes)
				}
				if gv, wv := got.Violation, want.Violation; (gv == nil) != (wv == nil) ||
					gv != nil && (gv.Property != wv.Property || !slices.Equal(gv.Path, wv.Path) || gv.Text(true) != wv.Text(true)) {
					t.Errorf("%d shards: counterexample differs", n)
				}
				if !strings.Contains(out, "as expected") {
					t.Errorf("merge of %d does not judge the spec:\n%s", n, out)
				}
			}
		})
	}
}

// Merge refuses a directory that is not one whole search, with one line.
func TestMergeRefusesMixedShards(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join("..", "specs", "classic-1.json")
	other := filepath.Join("..", "specs", "classic-2.json")
	for _, args := range [][]string{
		{"run", spec, "--shard", "0/2", "--shard-dir", dir},
		{"run", other, "--shard", "1/2", "--shard-dir", dir},
	} {
		if code, out, _ := runCLI(append(args, "--progress", "0")...); code != exitOK {
			t.Fatalf("%v: %d %s", args, code, out)
		}
	}
	code, _, stderr := runCLI("merge", dir)
	if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "another search") {
		t.Errorf("mixed: %d %q", code, stderr)
	}
	os.Remove(filepath.Join(dir, "shard-1-of-2.json"))
	code, _, stderr = runCLI("merge", dir)
	if code != exitUsage || !strings.Contains(stderr, "shard 1/2 is missing") {
		t.Errorf("missing: %d %q", code, stderr)
	}
	for _, tt := range []struct{ spec, env, want string }{
		{"2/2", "", "index \"2\" is not in 0..1"},
		{"x", "", "want i/N or auto/N"},
		{"auto/4", "", "neither JOB_COMPLETION_INDEX nor SLURM_ARRAY_TASK_ID is set"},
	} {
		if _, err := parseShard(tt.spec, func(string) string { return tt.env }); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseShard(%q) = %v, want %q", tt.spec, err, tt.want)
		}
	}
	env := map[string]string{"SLURM_ARRAY_TASK_ID": "3"}
	if sh, err := parseShard("auto/4", func(k string) string { return env[k] }); err != nil || sh.Index != 3 || sh.Count != 4 {
		t.Errorf("auto/4 with SLURM_ARRAY_TASK_ID=3: %v %v", sh, err)
	}
}
