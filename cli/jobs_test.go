package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const jobsDir = "../cmd/cutcheck/jobs"

// yamlCommands returns the command lists of a manifest's containers, in
// order: each "command:" key's block sequence.
func yamlCommands(text string) [][]string {
	lines := strings.Split(text, "\n")
	var out [][]string
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "command:" {
			continue
		}
		indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
		var cmd []string
		for i+1 < len(lines) {
			next := lines[i+1]
			item, ok := strings.CutPrefix(strings.TrimSpace(next), "- ")
			if !ok || len(next)-len(strings.TrimLeft(next, " ")) < indent {
				break
			}
			cmd = append(cmd, item)
			i++
		}
		out = append(out, cmd)
	}
	return out
}

// execCommand returns the arguments of a script's "exec cutcheck ..." or
// "cutcheck ..." line, continuation lines joined, without a trailing
// "|| status=$?".
func execCommand(text string) []string {
	i := strings.Index(text, "\nexec cutcheck ")
	if i < 0 {
		i = strings.Index(text, "\ncutcheck ")
	}
	if i < 0 {
		return nil
	}
	var line strings.Builder
	for _, l := range strings.Split(text[i+1:], "\n") {
		l = strings.TrimSpace(l)
		line.WriteString(strings.TrimSuffix(l, "\\") + " ")
		if !strings.HasSuffix(l, "\\") {
			break
		}
	}
	cmd, _, _ := strings.Cut(strings.TrimPrefix(line.String(), "exec "), " || ")
	return strings.Fields(strings.ReplaceAll(cmd, `"`, ""))
}

// localArgs turns a job's command into a local one: a tiny spec for the
// large one, dir for the shared volume, a small budget.
func localArgs(t *testing.T, cmd []string, volume, dir string) []string {
	t.Helper()
	if len(cmd) == 0 || cmd[0] != "cutcheck" {
		t.Fatalf("not a cutcheck command: %q", cmd)
	}
	var out []string
	for _, a := range cmd[1:] {
		a = strings.ReplaceAll(a, "specs/large/parallel-6.json", filepath.Join("..", "specs", "classic-1.json"))
		a = strings.ReplaceAll(a, "${SLURM_CPUS_PER_TASK:-2}", "1")
		if a == volume || strings.HasPrefix(a, volume+"/") {
			a = dir + strings.TrimPrefix(a, volume)
		} else if k, v, ok := strings.Cut(a, "="); ok && (v == volume || strings.HasPrefix(v, volume+"/")) {
			a = k + "=" + dir + strings.TrimPrefix(v, volume)
		}
		if strings.HasPrefix(a, "--mem=") {
			a = "--mem=256MiB"
		}
		if a == "6GiB" {
			a = "256MiB"
		}
		out = append(out, a)
	}
	return out
}

// runShards runs n shards of cmd, index i in the environment variable
// env, as the batch engine would (in this process, one after the other:
// TestShardsAsProcesses runs shards as processes), and returns how many
// exited 1, holding a violation; any other exit but 0 fails the test.
func runShards(t *testing.T, cmd []string, n int, env string) (violated int) {
	t.Helper()
	for i := range n {
		t.Setenv(env, fmt.Sprint(i))
		code, out, stderr := runCLI(cmd...)
		switch {
		case code == exitViolated && strings.Contains(out, "verdict:     violated"):
			violated++
		case code != exitOK:
			t.Fatalf("shard %d: exit %d\n%s%s", i, code, out, stderr)
		}
	}
	return violated
}

// Reference: issue 21, finding 11. The batch definitions' own commands,
// run locally: the shards write their results under the search's
// directory, a volume holding an earlier search's results does not change
// the merge, the merge finds exactly this search's shards and fails,
// naming it, when one has no result; the manifests use a locally built
// image; the Kubernetes driver merges only once the shards' Job has
// completed and stops at once, with a message, when it failed.
func TestBatchJobs(t *testing.T) {
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(jobsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	k8s, k8sMerge := read("kubernetes-indexed-job.yaml"), read("kubernetes-merge-job.yaml")
	for name, text := range map[string]string{"shards": k8s, "merge": k8sMerge} {
		if c, p := strings.Count(text, "image: cutcheck:latest"), strings.Count(text, "imagePullPolicy: IfNotPresent"); c == 0 || c != p {
			t.Errorf("%s manifest: %d images, %d with imagePullPolicy IfNotPresent", name, c, p)
		}
	}
	if !regexp.MustCompile(`completionMode: Indexed\s+completions: 8\s`).MatchString(k8s) || !regexp.MustCompile(`action: FailIndex.*\n(.*\n){3}\s+values: \[1, 2\]\n`).MatchString(k8s) {
		t.Error("the shards' Job is not an Indexed Job of 8 completions failing an index, without a retry, on exit 1 (a violation) and 2")
	}
	shardCmd, mergeCmd := yamlCommands(k8s), yamlCommands(k8sMerge)
	if len(shardCmd) != 1 || len(mergeCmd) != 1 {
		t.Fatalf("commands: %q %q", shardCmd, mergeCmd)
	}
	slurm, slurmMerge := read("slurm-array.sh"), read("slurm-merge.sh")
	if !strings.Contains(slurm, "#SBATCH --array=0-7") || !strings.Contains(slurm, "--dependency=afterany:") {
		t.Error("the Slurm array is not 0-7 with a merge after every task")
	}
	for _, job := range []struct {
		name, volume, env string
		shard, merge      []string
	}{
		{"kubernetes", "/results", "JOB_COMPLETION_INDEX", shardCmd[0], mergeCmd[0]},
		{"slurm", "shards", "SLURM_ARRAY_TASK_ID", execCommand(slurm), execCommand(slurmMerge)},
	} {
		t.Run(job.name, func(t *testing.T) {
			dir := t.TempDir()
			shard, merge := localArgs(t, job.shard, job.volume, dir), localArgs(t, job.merge, job.volume, dir)
			// A shard of an earlier search on the same volume.
			old := make([]string, len(shard))
			for i, a := range shard {
				old[i] = strings.ReplaceAll(a, "classic-1.json", "classic-2.json")
			}
			t.Setenv(job.env, "3")
			if code, out, stderr := runCLI(old...); code != exitOK {
				t.Fatalf("earlier search: exit %d\n%s%s", code, out, stderr)
			}
			if n := runShards(t, shard, 8, job.env); n != 0 {
				t.Fatalf("%d shards of a passing spec exited 1", n)
			}
			code, out, _ := runCLI(merge...)
			if code != exitOK || !strings.Contains(out, "merged 8 shards") || !strings.Contains(out, "spec classic-1: pass, as expected") {
				t.Fatalf("merge %q: exit %d\n%s", merge, code, out)
			}
			// A mutated spec, on a volume of its own: the shards that hold
			// its violation exit 1, their results written, and the merge
			// judges the spec.
			mdir := t.TempDir()
			mutShard, mutMerge := localArgs(t, job.shard, job.volume, mdir), localArgs(t, job.merge, job.volume, mdir)
			for _, args := range [][]string{mutShard, mutMerge} {
				for i, a := range args {
					args[i] = strings.ReplaceAll(a, "classic-1.json", "mut-late-start-classic.json")
				}
			}
			if n := runShards(t, mutShard, 8, job.env); n == 0 || n == 8 {
				t.Errorf("%d of 8 shards of a mutated spec exited 1; want some, not all", n)
			}
			if code, out, _ := runCLI(mutMerge...); code != exitOK || !strings.Contains(out, "merged 8 shards") || !strings.Contains(out, "as expected") {
				t.Fatalf("merge %q: exit %d\n%s", mutMerge, code, out)
			}
			results, _ := filepath.Glob(filepath.Join(dir, "*", "shard-3-of-8.json"))
			if len(results) != 2 {
				t.Fatalf("results of two searches expected in two directories: %v", results)
			}
			for _, r := range results {
				os.Remove(r)
			}
			code, _, out = runCLI(merge...)
			if code != exitUsage || !strings.Contains(out, "shard 3/8 is missing") {
				t.Errorf("merge without shard 3: exit %d\n%s", code, out)
			}
		})
	}

	// The Kubernetes driver, against a kubectl that reports the shards'
	// Job as failed (an index that found a violation fails too) or
	// complete, and the merge Job as failed or complete: the merge runs
	// once the shards' Job has ended either way, and its end is the
	// driver's.
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash for the Kubernetes driver")
	}
	bin := t.TempDir()
	kubectl := `#!/bin/sh
echo "$*" >> "$KUBECTL_LOG"
case "$*" in
  *jsonpath=*failedIndexes*) echo 3 ;;
  "get job/cutcheck-shards "*) echo "$SHARDS_STATE " ;;
  "get job/cutcheck-merge "*) echo "$MERGE_STATE " ;;
esac
`
	if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte(kubectl), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		shards, merge string
		ok            bool
		say           string
	}{
		{"Failed", "Complete", true, "job cutcheck-shards failed (failed indexes: 3)"},
		{"Complete", "Complete", true, ""},
		{"Failed", "Failed", false, "job cutcheck-merge failed"},
	} {
		log := filepath.Join(t.TempDir(), "kubectl.log")
		c := exec.Command("bash", filepath.Join(jobsDir, "kubernetes-run.sh"))
		c.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "KUBECTL_LOG="+log, "SHARDS_STATE="+tt.shards, "MERGE_STATE="+tt.merge)
		done := make(chan struct{})
		var out []byte
		var err error
		go func() { out, err = c.CombinedOutput(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			c.Process.Kill()
			t.Fatalf("shards %s, merge %s: the driver is still waiting", tt.shards, tt.merge)
		}
		calls, _ := os.ReadFile(log)
		merged := strings.Contains(string(calls), "apply -f "+filepath.Join(jobsDir, "kubernetes-merge-job.yaml"))
		if (err == nil) != tt.ok || !merged || !strings.Contains(string(calls), "logs job/cutcheck-merge") || !strings.Contains(string(out), tt.say) {
			t.Errorf("shards %s, merge %s: %v (want success %v), merge applied %v, want the merge's log and %q\n%s%s", tt.shards, tt.merge, err, tt.ok, merged, tt.say, out, calls)
		}
	}
}

// The Slurm task script ends COMPLETED (exit 0) when its shard finished,
// with a violation (exit 1) or without, and passes any other exit on, so
// that sacct shows only the tasks that did not finish as failed.
func TestSlurmTaskExit(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash for the Slurm script")
	}
	bin, work := t.TempDir(), t.TempDir()
	fake := "#!/bin/sh\nexit $FAKE_EXIT\n"
	if err := os.WriteFile(filepath.Join(bin, "cutcheck"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join(jobsDir, "slurm-array.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for exit, want := range map[int]int{0: 0, 1: 0, 2: 2, 3: 3, 4: 4} {
		c := exec.Command("bash", script)
		c.Dir = work
		c.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), fmt.Sprintf("FAKE_EXIT=%d", exit), "SLURM_ARRAY_TASK_ID=5")
		out, err := c.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != want || (exit == 1) != strings.Contains(string(out), "shard 5 holds a violation") {
			t.Errorf("cutcheck exit %d: the script exits %d, want %d\n%s", exit, code, want, out)
		}
	}
}
