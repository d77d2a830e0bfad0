package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
			for _, merge := range [][]string{{"merge", parts}, append([]string{"certify", "--shard", "merge/" + strconv.Itoa(n), "--shard-dir", parts}, c.args...)} {
				code, out, errs := runCLI(merge...)
				line := out[strings.Index(out, "\n")+1:]
				if code != wholeCode || line != whole {
					t.Errorf("%s, %d parts, %s: merged %d %q (%s), whole %d %q", c.name, n, merge[0], code, line, errs, wholeCode, whole)
				}
			}
		}
	}
	// --json: a part prints its outcome as JSON, the merge the whole
	// verification's result as certify --json does (the merged line to
	// standard error), with the whole run's verdict, cut and exit code.
	for _, args := range [][]string{{bundle}, {"--from", "debezium", "--table", "customers", stale}} {
		wholeCode, whole, _ := runCLI(append([]string{"certify", "--json"}, args...)...)
		parts := filepath.Join(dir, fmt.Sprintf("json%d", len(args)))
		for i := range 2 {
			code, out, errs := runCLI(append([]string{"certify", "--json", "--shard", strconv.Itoa(i) + "/2", "--shard-dir", parts}, args...)...)
			var p struct {
				Part, File string
				Failures   int
			}
			if err := json.Unmarshal([]byte(out), &p); err != nil || p.Part != fmt.Sprintf("%d/2", i) || !strings.HasSuffix(p.File, ".json") || code == exitOK && p.Failures > 0 {
				t.Errorf("part %d/2 --json: code %d out %q err %q (%v)", i, code, out, errs, err)
			}
		}
		code, out, errs := runCLI(append([]string{"certify", "--json", "--shard", "merge/2", "--shard-dir", parts}, args...)...)
		var got, want struct {
			Verdict string
			Cut     json.RawMessage
		}
		if json.Unmarshal([]byte(out), &got) != nil || json.Unmarshal([]byte(whole), &want) != nil || code != wholeCode ||
			got.Verdict == "" || got.Verdict != want.Verdict || string(got.Cut) != string(want.Cut) || !strings.Contains(errs, "merged 2 parts") {
			t.Errorf("merge/2 --json: code %d %q err %q; whole %d %q", code, out, errs, wholeCode, whole)
		}
	}
	// Two bundles' parts under one --shard-dir: merge one directory.
	mixed := filepath.Join(dir, "mixed")
	certifyParts(t, mixed, 2, bundle)
	certifyParts(t, mixed, 2, "--from", "debezium", "--table", "customers", stale)
	if code, _, errs := runCLI("merge", mixed); code != exitUsage || !strings.Contains(errs, "parts of 2 bundles") {
		t.Errorf("mixed: code %d err %q", code, errs)
	}
	// certify --shard merge/N takes the bundle's own parts only.
	if code, out, errs := runCLI("certify", "--shard", "merge/2", "--shard-dir", mixed, bundle); code != exitOK || !strings.Contains(out, "merged 2 parts") {
		t.Errorf("merge/2 of a mixed directory: code %d out %q err %q", code, out, errs)
	}
	if code, _, errs := runCLI("certify", "--shard", "merge/3", "--shard-dir", mixed, bundle); code != exitUsage || !strings.Contains(errs, "not a part of a split into 3") {
		t.Errorf("merge/3 of a split into 2: code %d err %q", code, errs)
	}
	subs, _ := filepath.Glob(filepath.Join(mixed, "certify-*"))
	one := subs[0]
	os.Remove(filepath.Join(one, "part-1-of-2.json"))
	if code, _, errs := runCLI("merge", one); code != exitUsage || !strings.Contains(errs, "part 1/2 is missing") {
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
	for _, bad := range [][]string{{"--shard", "3/3"}, {"--shard", "merge/0"}, {"--shard", "0/2", "--scope", "range=1..3"}, {"--shard", "auto/2"}} {
		code, _, errs := runCLI(append(append([]string{"certify"}, bad...), "--shard-dir", dir, bundle)...)
		if code != exitUsage || strings.Count(errs, "\n") > 2 || !strings.Contains(errs, "--shard") {
			t.Errorf("%v: code %d err %q", bad, code, errs)
		}
	}
}

// The split verification's batch definitions, their own commands run
// locally: the parts write under the bundle's directory, merge/8 gives the
// whole verification's line and exit (an Accept, a Reject), a missing part
// is named; the Kubernetes Job fails an index without a retry on 1, 2 and
// 5, the Slurm task ends COMPLETED on 1 and 5, and the Kubernetes driver
// runs the certify Jobs when asked.
func TestCertifyBatchJobs(t *testing.T) {
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(jobsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	k8s, k8sMerge := read("kubernetes-certify-job.yaml"), read("kubernetes-certify-merge-job.yaml")
	if !regexp.MustCompile(`completionMode: Indexed\s+completions: 8\s`).MatchString(k8s) || !regexp.MustCompile(`action: FailIndex.*\n(.*\n){3}\s+values: \[1, 2, 5\]\n`).MatchString(k8s) {
		t.Error("the parts' Job is not an Indexed Job of 8 completions failing an index, without a retry, on exit 1, 2 and 5")
	}
	slurm, slurmMerge := read("slurm-certify-array.sh"), read("slurm-certify-merge.sh")
	if !strings.Contains(slurm, "#SBATCH --array=0-7") || !strings.Contains(slurm, "--dependency=afterany:") {
		t.Error("the Slurm array is not 0-7 with a merge after every task")
	}
	stale, err := os.ReadFile("../certify/testdata/debezium-customers-stale.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, job := range []struct {
		name, volume, env string
		parts, merge      []string
	}{
		{"kubernetes", "/results", "JOB_COMPLETION_INDEX", yamlCommands(k8s)[0], yamlCommands(k8sMerge)[0]},
		{"slurm", "parts", "SLURM_ARRAY_TASK_ID", execCommand(slurm), execCommand(slurmMerge)},
	} {
		t.Run(job.name, func(t *testing.T) {
			for _, c := range []struct {
				name  string
				write func(bundle string)
			}{
				{"accepted", func(bundle string) {
					runCLI("certify", "--from", "debezium", "--table", "customers", "--notifications", notifications, "--write-bundle", bundle, sample)
				}},
				{"stale", func(bundle string) {
					src := filepath.Join(t.TempDir(), "stale.jsonl")
					os.WriteFile(src, stale, 0o644)
					runCLI("certify", "--from", "debezium", "--table", "customers", "--write-bundle", bundle, src)
				}},
			} {
				dir := t.TempDir()
				bundle := filepath.Join(dir, "bundle.jsonl")
				c.write(bundle)
				wholeCode, whole, _ := runCLI("certify", bundle)
				local := func(cmd []string) []string {
					args := localArgs(t, cmd, job.volume, dir)
					for i, a := range args {
						if a == "bundle.jsonl" {
							args[i] = bundle
						}
					}
					return args
				}
				parts, merge := local(job.parts), local(job.merge)
				failed := 0
				for i := range 8 {
					t.Setenv(job.env, strconv.Itoa(i))
					code, out, errs := runCLI(parts...)
					switch {
					case code == exitViolated || code == exitUnsupported:
						failed++
					case code != exitOK:
						t.Fatalf("%s part %d: exit %d\n%s%s", c.name, i, code, out, errs)
					}
				}
				code, out, errs := runCLI(merge...)
				if line := out[strings.Index(out, "\n")+1:]; code != wholeCode || line != whole || !strings.Contains(out, "merged 8 parts") {
					t.Fatalf("%s: merge %q: exit %d %q %s; whole %d %q", c.name, merge, code, out, errs, wholeCode, whole)
				}
				if (wholeCode == exitOK) != (failed == 0) {
					t.Errorf("%s: %d parts met a failure; the whole verification exits %d", c.name, failed, wholeCode)
				}
				results, _ := filepath.Glob(filepath.Join(dir, "*", "part-3-of-8.json"))
				if len(results) != 1 {
					t.Fatalf("%s: part 3's result: %v", c.name, results)
				}
				os.Remove(results[0])
				if code, _, errs := runCLI(merge...); code != exitUsage || !strings.Contains(errs, "part 3/8 is missing") {
					t.Errorf("%s: merge without part 3: exit %d %s", c.name, code, errs)
				}
			}
		})
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash for the scripts")
	}
	// The Slurm task: COMPLETED on 0, 1 and 5; any other exit passed on.
	bin, work := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "cutcheck"), []byte("#!/bin/sh\nexit $FAKE_EXIT\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs(filepath.Join(jobsDir, "slurm-certify-array.sh"))
	for fake, want := range map[int]int{0: 0, 1: 0, 5: 0, 2: 2, 3: 3} {
		c := exec.Command("bash", script)
		c.Dir = work
		c.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), fmt.Sprintf("FAKE_EXIT=%d", fake))
		err := c.Run()
		got := 0
		if ee, ok := err.(*exec.ExitError); ok {
			got = ee.ExitCode()
		}
		if got != want {
			t.Errorf("a part exiting %d: the task exits %d, want %d", fake, got, want)
		}
	}
	// The Kubernetes driver with certify: the certify Jobs, in order.
	kubectl := "#!/bin/sh\necho \"$*\" >> \"$KUBECTL_LOG\"\ncase \"$*\" in\n  \"get job/\"*) echo \"Complete \" ;;\nesac\n"
	if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte(kubectl), 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "kubectl.log")
	c := exec.Command("bash", filepath.Join(jobsDir, "kubernetes-run.sh"), "certify")
	c.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "KUBECTL_LOG="+log)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	calls, _ := os.ReadFile(log)
	want := []string{"delete job cutcheck-certify-parts cutcheck-certify-merge", "apply -f " + filepath.Join(jobsDir, "kubernetes-certify-job.yaml"),
		"get job/cutcheck-certify-parts", "apply -f " + filepath.Join(jobsDir, "kubernetes-certify-merge-job.yaml"), "logs job/cutcheck-certify-merge"}
	at := 0
	for _, w := range want {
		i := strings.Index(string(calls)[at:], w)
		if i < 0 {
			t.Fatalf("the driver's calls lack %q in order:\n%s", w, calls)
		}
		at += i
	}
	if c := exec.Command("bash", filepath.Join(jobsDir, "kubernetes-run.sh"), "check"); c.Run() == nil {
		t.Error("the driver accepts an unknown job")
	}
}
