package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/specs"
)

// shardFormat names the shard result format; merge refuses any other.
const shardFormat = "cutcheck-shard/1"

// shardFlags are check's flags for one shard of a split search.
type shardFlags struct {
	spec  string // "i/N", "auto/N" or ""
	dir   string
	depth int
}

func (s *shardFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&s.spec, "shard", "", "run one shard of an N-way split search: i/N (0 ≤ i < N), or auto/N to take i from JOB_COMPLETION_INDEX (Kubernetes) or SLURM_ARRAY_TASK_ID (Slurm); merge the results with 'cutcheck merge'")
	fs.StringVar(&s.dir, "shard-dir", ".", "directory the shard result is written to (shard-I-of-N.json)")
	fs.IntVar(&s.depth, "shard-depth", 3, "row transactions in the shard key: states split by the base store and their first d transactions")
}

// parse checks the flags and returns the shard to run.
func (s *shardFlags) parse() (explore.Shard, error) {
	sh, err := parseShard(s.spec, os.Getenv)
	if err != nil {
		return sh, err
	}
	if s.depth < 0 {
		return sh, fmt.Errorf("--shard-depth must be ≥ 0, got %d", s.depth)
	}
	sh.Depth = s.depth
	if fi, err := os.Stat(s.dir); err != nil || !fi.IsDir() {
		return sh, fmt.Errorf("--shard-dir %s is not a directory", s.dir)
	}
	// The result is written at the end: find out now that it can be.
	probe, err := os.CreateTemp(s.dir, ".shard-*.tmp")
	if err != nil {
		return sh, fmt.Errorf("--shard-dir %s: cannot write there: %v", s.dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return sh, nil
}

// onlyString names a selection of properties, so that shards of searches
// checking different properties never merge.
func onlyString(only, with []string) string {
	s := ""
	if len(only) > 0 {
		s += " only=" + strings.Join(only, ",")
	}
	if len(with) > 0 {
		s += " with=" + strings.Join(with, ",")
	}
	return s
}

// runSpecShard runs one shard of a spec file's search.
func runSpecShard(s specs.Spec, opts explore.Options, flags *shardFlags, stdout, stderr io.Writer) int {
	sh, err := flags.parse()
	if err != nil {
		return usageErr(stderr, "run", "%v", err)
	}
	cfg, p, err := s.Config()
	if err != nil {
		fmt.Fprintf(stderr, "cutcheck run: %v\n", err)
		return exitUsage
	}
	opts = s.Options(opts)
	opts.Shard = sh
	what := fmt.Sprintf("spec %s: %s %s%s", s.Name, p.Name, cfg, onlyString(opts.Only, opts.With))
	ctx, stop := interrupted()
	defer stop()
	fmt.Fprintf(stdout, "cutcheck %s: checking %s, shard %v\n", version, what, sh)
	rep, err := p.Check(ctx, cfg, opts)
	if err != nil {
		fmt.Fprintf(stderr, "cutcheck run: %v\n", err)
		return exitError
	}
	return finishShard(shardFile{Model: what, Spec: &s, SpecName: s.Name, ShardReport: explore.ShardReport{Shard: sh, Report: rep}}, flags.dir, "run", stdout, stderr)
}

// finishShard writes a shard's result and says where.
func finishShard(f shardFile, dir, cmd string, stdout, stderr io.Writer) int {
	f.Format, f.Version = shardFormat, version
	path, err := writeShard(dir, f)
	if err != nil {
		fmt.Fprintf(stderr, "cutcheck %s: writing the shard result: %v\n", cmd, err)
		return exitError
	}
	fmt.Fprint(stdout, f.Report.Summary())
	fmt.Fprintf(stdout, "shard result: %s (combine all %d with 'cutcheck merge %s')\n", path, f.Shard.Count, dir)
	if f.Report.Verdict == explore.Incomplete {
		return exitIncomplete
	}
	return exitOK
}

// shardEnv are the variables a batch engine sets to a task's index.
var shardEnv = []string{"JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"}

// parseShard reads "i/N" or "auto/N".
func parseShard(spec string, getenv func(string) string) (explore.Shard, error) {
	i, n, ok := strings.Cut(spec, "/")
	count, err := strconv.Atoi(n)
	if !ok || err != nil || count < 1 || count > 1<<16 {
		return explore.Shard{}, fmt.Errorf("--shard: want i/N or auto/N with 1 ≤ N ≤ 65536, got %q", spec)
	}
	if i == "auto" {
		for _, name := range shardEnv {
			if v := getenv(name); v != "" {
				i = v
				break
			}
		}
		if i == "auto" {
			return explore.Shard{}, fmt.Errorf("--shard auto/%d: neither %s is set", count, strings.Join(shardEnv, " nor "))
		}
	}
	index, err := strconv.Atoi(i)
	if err != nil || index < 0 || index >= count {
		return explore.Shard{}, fmt.Errorf("--shard: index %q is not in 0..%d", i, count-1)
	}
	return explore.Shard{Index: index, Count: count}, nil
}

// shardFile is one shard's result on disk.
type shardFile struct {
	Format  string `json:"format"`
	Version string `json:"version"`
	// Model names the search: protocol, bounds, mutation, properties and
	// shard depth. Merge refuses results of different searches.
	Model string `json:"model"`
	// Spec is the spec file a shard of 'run' checks: merge judges the
	// merged verdict against its expectation.
	Spec     *specs.Spec `json:"spec,omitempty"`
	SpecName string      `json:"spec_name,omitempty"`
	explore.ShardReport
}

func shardFileName(sh explore.Shard) string {
	return fmt.Sprintf("shard-%d-of-%d.json", sh.Index, sh.Count)
}

// writeShard writes a shard's result atomically: a reader never sees part of it.
func writeShard(dir string, f shardFile) (string, error) {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, shardFileName(f.Shard))
	tmp, err := os.CreateTemp(dir, ".shard-*.tmp")
	if err != nil {
		return "", err
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return path, os.Rename(tmp.Name(), path)
}

// readShards reads every shard-*.json of dir, refusing what is not one
// search; spec is the spec file the search checks, if any.
func readShards(dir string) (model string, spec *specs.Spec, parts []explore.ShardReport, err error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", nil, nil, fmt.Errorf("%s is not a directory of shard results", dir)
	}
	names, err := filepath.Glob(filepath.Join(dir, "shard-*-of-*.json"))
	if err != nil {
		return "", nil, nil, err
	}
	if len(names) == 0 {
		return "", nil, nil, fmt.Errorf("%s holds no shard results (shard-I-of-N.json)", dir)
	}
	sort.Strings(names)
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			return "", nil, nil, err
		}
		var f shardFile
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return "", nil, nil, fmt.Errorf("%s: not a shard result: %v", name, err)
		}
		switch {
		case f.Format != shardFormat:
			return "", nil, nil, fmt.Errorf("%s: format %q, want %q", name, f.Format, shardFormat)
		case model == "":
			model = f.Model
		case f.Model != model:
			return "", nil, nil, fmt.Errorf("%s is a shard of another search: %q, not %q", name, f.Model, model)
		}
		if f.Spec != nil {
			f.Spec.Name = f.SpecName
			spec = f.Spec
		}
		parts = append(parts, f.ShardReport)
	}
	return model, spec, parts, nil
}

type mergeOpts struct {
	jsonOut, traceJSON, html string
	fullStates               bool
}

func mergeFlags() (*pflag.FlagSet, *mergeOpts) {
	o := &mergeOpts{}
	fs := pflag.NewFlagSet("merge", pflag.ContinueOnError)
	fs.StringVar(&o.jsonOut, "json", "", "write the machine-readable merged result to this file")
	fs.StringVar(&o.traceJSON, "trace-json", "", "write the counterexample trace as JSON to this file")
	fs.StringVar(&o.html, "html", "", "write the counterexample as a self-contained HTML picture to this file")
	fs.BoolVar(&o.fullStates, "full-states", false, "print whole states in traces instead of what changed")
	return fs, o
}

// runMerge is `cutcheck merge DIR`: the shards of one search, combined into
// the report a single run prints.
func runMerge(args []string, stdout, stderr io.Writer) int {
	fs, o := mergeFlags()
	if code := parse(fs, args, stdout, stderr); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		return usageErr(stderr, "merge", "expected one directory of shard results, got %d arguments", fs.NArg())
	}
	model, spec, parts, err := readShards(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "cutcheck merge: %v\n", err)
		return exitUsage
	}
	outs, err := openOutputs(o.jsonOut, o.traceJSON, o.html)
	if err != nil {
		return usageErr(stderr, "merge", "%v", err)
	}
	defer outs.discard()
	rep, balance, err := explore.Merge(parts)
	if err != nil {
		fmt.Fprintf(stderr, "cutcheck merge: %s: %v\n", fs.Arg(0), err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "cutcheck %s: merged %d shards of %s\n", version, len(parts), model)
	fmt.Fprint(stdout, rep.Summary())
	fmt.Fprintf(stdout, "shards:\n")
	for _, b := range balance {
		fmt.Fprintf(stdout, "  %-6v owned %12d  shared %10d  %s\n", b.Shard, b.Owned, b.Shared, b.Elapsed.Round(1e6))
	}
	if rep.Violation != nil {
		fmt.Fprintf(stdout, "\nCounterexample (%d steps):\n%s", len(rep.Violation.Steps)-1, rep.Violation.Text(o.fullStates))
	}
	if err := outs.write(rep, model); err != nil {
		fmt.Fprintf(stderr, "cutcheck merge: %v\n", err)
		return exitError
	}
	if spec != nil {
		got, ok, why := spec.Judge(rep)
		if !ok {
			fmt.Fprintf(stdout, "spec %s: MISMATCH: %s\n", spec.Name, why)
			return exitViolated
		}
		fmt.Fprintf(stdout, "spec %s: %s, as expected\n", spec.Name, got)
		return exitOK
	}
	return verdictCode(rep.Verdict)
}
