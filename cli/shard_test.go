package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// splitRun runs the spec at path split into n shards (extra: more flags
// for each shard) and merges them, each shard and the merge in a process
// of its own (procs) or in this one; it fails unless every shard finishes
// and the merge exits as the single run's verdict says. It returns the
// merged report and merge's output.
func splitRun(t *testing.T, path string, n int, ok, procs bool, extra ...string) (explore.Report, string) {
	t.Helper()
	dir := t.TempDir()
	call := func(args ...string) (int, string) {
		if procs {
			return asProcess(t, args...)
		}
		code, out, stderr := runCLI(args...)
		return code, out + stderr
	}
	var wg sync.WaitGroup
	codes := make([]int, n)
	outs := make([]string, n)
	for i := range n {
		args := append([]string{"run", path, "--shard", fmt.Sprintf("%d/%d", i, n), "--shard-dir", dir, "--workers", "1", "--progress", "0"}, extra...)
		if !procs {
			codes[i], outs[i] = call(args...)
			continue
		}
		wg.Go(func() { codes[i], outs[i] = call(args...) })
	}
	wg.Wait()
	violated := 0
	for i := range n {
		// A shard exits 1 exactly when its result, written all the same,
		// holds a violation.
		names, _ := filepath.Glob(filepath.Join(dir, "*", fmt.Sprintf("shard-%d-of-%d.json", i, n)))
		if len(names) != 1 {
			t.Fatalf("shard %d/%d: exit %d, results %v\n%s", i, n, codes[i], names, outs[i])
		}
		f, err := readShard(names[0])
		if err != nil {
			t.Fatal(err)
		}
		want := exitOK
		if f.Report.Violation != nil {
			want = exitViolated
			violated++
		}
		if codes[i] != want {
			t.Fatalf("shard %d/%d: exit %d, want %d (verdict %s)\n%s", i, n, codes[i], want, f.Report.VerdictName, outs[i])
		}
	}
	merged := filepath.Join(dir, "merged.json")
	code, out := call("merge", dir, "--json", merged)
	if want := map[bool]int{true: exitOK, false: exitViolated}[ok]; code != want {
		t.Fatalf("merge of %d: exit %d, want %d\n%s", n, code, want, out)
	}
	if !strings.Contains(out, "as expected") {
		t.Errorf("merge of %d does not judge the spec:\n%s", n, out)
	}
	var got explore.Report
	if err := json.Unmarshal(must(os.ReadFile(merged)), &got); err != nil {
		t.Fatal(err)
	}
	if (violated > 0) != (got.Violation != nil) {
		t.Errorf("%d of %d shards exited 1; the merged verdict is %s", violated, n, got.VerdictName)
	}
	return got, out
}

// singleRun is the unsplit run of the spec at path.
func singleRun(t *testing.T, path string) specs.Outcome {
	t.Helper()
	s, err := specs.Parse(path, must(os.ReadFile(path)))
	if err != nil {
		t.Fatal(err)
	}
	single, err := specs.Run(context.Background(), s, explore.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return single
}

// sameAsSingle fails unless a merged report is the single run's: distinct,
// generated, depth, queue peak, coverage, sometimes-properties, verdict
// and the same shortest counterexample.
func sameAsSingle(t *testing.T, what string, got, want explore.Report) {
	t.Helper()
	g, w := got.Stats, want.Stats
	if got.VerdictName != want.VerdictName || g.Distinct != w.Distinct || g.Generated != w.Generated || g.Depth != w.Depth || g.QueuePeak != w.QueuePeak {
		t.Errorf("%s: %s %+v; single run %s %+v", what, got.VerdictName, g, want.VerdictName, w)
	}
	if !slices.Equal(got.Coverage, want.Coverage) || !slices.Equal(got.Sometimes, want.Sometimes) {
		t.Errorf("%s: coverage %v sometimes %v; single run %v %v", what, got.Coverage, got.Sometimes, want.Coverage, want.Sometimes)
	}
	if gv, wv := got.Violation, want.Violation; (gv == nil) != (wv == nil) ||
		gv != nil && (gv.Property != wv.Property || !slices.Equal(gv.Path, wv.Path) || gv.Text(true) != wv.Text(true)) {
		t.Errorf("%s: counterexample differs", what)
	}
}

// Reference: explore/shard.go — a spec split into shards, each run as a
// separate process, merges into exactly the single run, a passing spec
// and a mutated one with its counterexample; merge prints the split's key
// depth (chosen from the search by default) and what it cost.
func TestShardsAsProcesses(t *testing.T) {
	for _, file := range []string{"classic-2.json", "mut-late-start-classic.json"} {
		path := filepath.Join("..", "specs", file)
		single := singleRun(t, path)
		got, out := splitRun(t, path, 3, single.OK, true)
		sameAsSingle(t, file+" in 3 processes", got, single.Report)
		if !strings.Contains(out, "shard key: depth ") || !strings.Contains(out, "(auto: in the first") || !strings.Contains(out, "split overhead: ") {
			t.Errorf("%s: merge does not report the split:\n%s", file, out)
		}
	}
}

// Every shipped protocol at two bounds, a mutated spec and four specs of
// the open disciplines, split 2 and 7 ways at the automatic depth and 4
// ways at depth 3 (the larger bounds 7 ways only, and not under the race
// detector), merge into exactly the single run (in this process:
// TestShardsAsProcesses shows the same of separate processes).
func TestShardsMergeExactly(t *testing.T) {
	files := []string{"mut-late-start-classic.json",
		// the open disciplines (§6.5), passing and failing
		"open-rewind-wrong-suffix.json", "open-reread-racing.json", "open-versionmax-client.json", "open-keyrange-nonmonotone.json"}
	protocols := []string{"classic", "readonly", "parallel", "dump", "composite"}
	for _, p := range protocols {
		files = append(files, p+"-1.json")
	}
	if !raceEnabled {
		for _, p := range protocols {
			files = append(files, p+"-2.json")
		}
	}
	type split struct {
		n     int
		extra []string
	}
	for _, file := range files {
		path := filepath.Join("..", "specs", file)
		single := singleRun(t, path)
		splits := []split{{2, nil}, {7, nil}, {4, []string{"--shard-depth", "3"}}}
		if strings.HasSuffix(file, "-2.json") {
			splits = splits[1:2]
		}
		for _, split := range splits {
			got, _ := splitRun(t, path, split.n, single.OK, false, split.extra...)
			sameAsSingle(t, fmt.Sprintf("%s in %d shards %v", file, split.n, split.extra), got, single.Report)
		}
	}
}

// Merge refuses what is not one whole search, with one line and exit 2:
// results of two searches (other bounds, other deadlock checking) under
// one --shard-dir, a shard of another build, a result edited by hand, a
// missing shard. Each search's shards write to a directory of their own,
// which --shard merge/N finds from the same flags; a shard that does not
// finish writes nothing.
func TestMergeRefusesMixedShards(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join("..", "specs", "classic-1.json")
	other := filepath.Join("..", "specs", "classic-2.json")
	shard := func(args ...string) {
		t.Helper()
		if code, out, stderr := runCLI(append(args, "--shard-dir", dir, "--progress", "0")...); code != exitOK {
			t.Fatalf("%v: %d %s%s", args, code, out, stderr)
		}
	}
	refused := func(what, want string, args ...string) {
		t.Helper()
		code, _, stderr := runCLI(args...)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d %q, want exit 2 and %q", what, code, stderr, want)
		}
	}
	shard("run", spec, "--shard", "0/2")
	shard("run", other, "--shard", "1/2")
	shard("run", spec, "--shard", "1/2", "--no-deadlock")
	refused("three searches", "holds the shards of 3 searches", "merge", dir)
	// merge/N takes the search's own directory, whatever else is there.
	shard("run", spec, "--shard", "1/2")
	if code, out, stderr := runCLI("run", spec, "--shard", "merge/2", "--shard-dir", dir); code != exitOK || !strings.Contains(out, "as expected") {
		t.Fatalf("merge/2: %d %s%s", code, out, stderr)
	}
	refused("merge/2 of a missing search", "shard 0/2 is missing", "run", spec, "--shard", "merge/2", "--shard-dir", dir, "--no-deadlock")

	// Copied into one directory, the results are still told apart.
	search := func(args ...string) string {
		opts := explore.Options{NoDeadlock: slices.Contains(args, "--no-deadlock"), Shard: explore.Shard{Count: 2, Depth: explore.AutoDepth}}
		s, err := specs.Parse(args[0], must(os.ReadFile(args[0])))
		if err != nil {
			t.Fatal(err)
		}
		cfg, p, _ := s.Config()
		return searchDir(dir, specs.Identify(p, cfg, s.Options(opts)))
	}
	mixed := t.TempDir()
	copyFile := func(from, to string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(mixed, to), must(os.ReadFile(from)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(filepath.Join(search(spec), "shard-0-of-2.json"), "shard-0-of-2.json")
	copyFile(filepath.Join(search(spec, "--no-deadlock"), "shard-1-of-2.json"), "shard-1-of-2.json")
	refused("mixed --no-deadlock", `deadlock is "true" in one, "false" in the other`, "merge", mixed)
	copyFile(filepath.Join(search(other), "shard-1-of-2.json"), "shard-1-of-2.json")
	refused("other bounds", "are shards of different searches: keys is", "merge", mixed)

	// A shard of another build: a valid file whose build differs.
	f, err := readShard(filepath.Join(search(spec), "shard-1-of-2.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range f.Identity {
		if f.Identity[i].Name == "build" {
			f.Identity[i].Value += " modified"
		}
	}
	if _, err := writeShard(mixed, f); err != nil {
		t.Fatal(err)
	}
	refused("another build", "build is", "merge", mixed)

	// Counts edited by hand.
	copyFile(filepath.Join(search(spec), "shard-1-of-2.json"), "shard-1-of-2.json")
	if code, out, stderr := runCLI("merge", mixed); code != exitOK {
		t.Fatalf("the shards of one search: %d %s%s", code, out, stderr)
	}
	path := filepath.Join(mixed, "shard-1-of-2.json")
	data := must(os.ReadFile(path))
	edited := regexp.MustCompile(`"distinct": \d+`).ReplaceAllString(string(data), `"distinct": 12345`)
	if edited == string(data) {
		t.Fatal("no distinct count in the shard result")
	}
	os.WriteFile(path, []byte(edited), 0o644)
	refused("edited counts", "does not match its checksum", "merge", mixed)
	os.WriteFile(path, data[:len(data)/2], 0o644)
	refused("cut short", "shard-1-of-2.json", "merge", mixed)
	os.Remove(path)
	refused("missing", "shard 1/2 is missing", "merge", mixed)

	// A shard stopped early writes nothing and says so.
	stopped := t.TempDir()
	code, _, stderr := runCLI("run", spec, "--shard", "0/2", "--shard-dir", stopped, "--max-depth", "1", "--progress", "0")
	if names, _ := filepath.Glob(filepath.Join(stopped, "*", "*")); code != exitIncomplete || len(names) != 0 || !strings.Contains(stderr, "no result written") {
		t.Errorf("stopped shard: exit %d, files %v, %q", code, names, stderr)
	}
	for _, tt := range []struct{ spec, env, want string }{
		{"2/2", "", "index \"2\" is not in 0..1"},
		{"x", "", "want i/N, auto/N or merge/N"},
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

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// --shard-depth takes auto or a number; anything else is refused with one
// line and exit 2. An explicit depth is used as given, and is part of the
// search identity: shards of two depths never merge.
func TestShardDepthFlag(t *testing.T) {
	for _, bad := range []string{"-1", "deep", ""} {
		code, _, stderr := runCLI("check", "classic", "--keys", "1", "--chunks", "1", "--shard", "0/2", "--shard-depth", bad, "--shard-dir", t.TempDir())
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--shard-depth: want auto or a number") {
			t.Errorf("--shard-depth %q: exit %d %q", bad, code, stderr)
		}
	}
	dir := t.TempDir()
	code, out, stderr := runCLI("check", "classic", "--keys", "1", "--chunks", "1", "--shard", "0/2", "--shard-depth", "2", "--shard-dir", dir, "--progress", "0")
	if code != exitOK || !strings.Contains(out, "shard key: depth 2\n") {
		t.Fatalf("--shard-depth 2: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, stderr := runCLI("check", "classic", "--keys", "1", "--chunks", "1", "--shard", "1/2", "--shard-dir", dir, "--progress", "0"); code != exitOK || !strings.Contains(out, "(auto: in the first") {
		t.Fatalf("auto depth: exit %d\n%s%s", code, out, stderr)
	}
	code, _, stderr = runCLI("merge", dir)
	if code != exitUsage || !strings.Contains(stderr, "holds the shards of 2 searches") {
		t.Errorf("merging shards of depth 2 and auto: exit %d %q", code, stderr)
	}
}

// A missing --shard-dir is made (a batch engine's fresh volume); a file
// in its place is refused with exit 2.
func TestShardDirMade(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	code, out, stderr := runCLI("check", "classic", "--keys", "1", "--chunks", "1", "--shard", "0/2", "--shard-dir", dir, "--progress", "0")
	if code != exitOK || !strings.Contains(out, "shard result: "+dir) {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	if code, _, stderr := runCLI("check", "classic", "--keys", "1", "--chunks", "1", "--shard", "0/2", "--shard-dir", file); code != exitUsage || !strings.Contains(stderr, "--shard-dir") {
		t.Errorf("a file as --shard-dir: exit %d %q", code, stderr)
	}
}
