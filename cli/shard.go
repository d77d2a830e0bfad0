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

	"github.com/cespare/xxhash/v2"
	"github.com/spf13/pflag"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/specs"
)

// shardFormat names the shard result format; merge refuses any other.
const shardFormat = "cutcheck-shard/2"

// shardFlags are check's flags for one shard of a split search.
type shardFlags struct {
	spec  string // "i/N", "auto/N" or ""
	dir   string
	depth string // "auto" or a number
}

func (s *shardFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&s.spec, "shard", "", "run one shard of an N-way split search: i/N (0 ≤ i < N), or auto/N to take i from JOB_COMPLETION_INDEX (Kubernetes) or SLURM_ARRAY_TASK_ID (Slurm); merge/N combines the N results of the search the other flags name (as '"+progName+" merge' does)")
	fs.StringVar(&s.dir, "shard-dir", ".", "directory under which a shard writes its result, to IDENTITY/shard-I-of-N.json, IDENTITY naming the search")
	fs.StringVar(&s.depth, "shard-depth", "auto", "row transactions in the shard key (states split by the base store and their first d transactions), or auto: the depth that keeps undetermined states, explored by every shard, under 5% and the shards within 1.5× of each other in a sample of the search's first states")
}

// parse checks the flags and returns the shard to run, or, for merge/N,
// the split to merge (merge true).
func (s *shardFlags) parse() (explore.Shard, bool, error) {
	merge := strings.HasPrefix(s.spec, "merge/")
	spec := s.spec
	if merge {
		spec = "0/" + strings.TrimPrefix(spec, "merge/")
	}
	sh, err := parseShard(spec, os.Getenv)
	if err != nil && merge {
		err = fmt.Errorf("--shard: want merge/N with 1 ≤ N ≤ 65536, got %q", s.spec)
	}
	if err != nil {
		return sh, merge, err
	}
	sh.Depth = explore.AutoDepth
	if s.depth != "auto" {
		if sh.Depth, err = strconv.Atoi(s.depth); err != nil || sh.Depth < 0 {
			return sh, merge, fmt.Errorf("--shard-depth: want auto or a number ≥ 0, got %q", s.depth)
		}
	}
	if merge {
		return sh, true, nil
	}
	return sh, false, s.writable()
}

// writable checks that a result can be written under --shard-dir, made
// if missing (a batch engine's fresh volume).
func (s *shardFlags) writable() error {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("--shard-dir %s: %v", s.dir, err)
	}
	if fi, err := os.Stat(s.dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("--shard-dir %s is not a directory", s.dir)
	}
	// The result is written at the end: find out now that it can be.
	probe, err := os.CreateTemp(s.dir, ".shard-*.tmp")
	if err != nil {
		return fmt.Errorf("--shard-dir %s: cannot write there: %v", s.dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// searchDir is where the shards of the search opts names write their
// results: a directory named by its identity's fingerprint, so that the
// results of another search (a reused volume, other flags, another build)
// never mix with them.
func searchDir(shardDir string, opts explore.Options) string {
	return filepath.Join(shardDir, opts.SearchIdentity().Fingerprint())
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

// runSpecShard runs one shard of a spec file's search, or merges them
// (--shard merge/N).
func runSpecShard(s specs.Spec, opts explore.Options, flags *shardFlags, resume *resumeFlag, stdout, stderr io.Writer) int {
	sh, merge, err := flags.parse()
	if err != nil {
		return usageErr(stderr, "run", "%v", err)
	}
	cfg, p, err := s.Config()
	if err != nil {
		fmt.Fprintf(stderr, "%s run: %v\n", progName, err)
		return exitUsage
	}
	opts = specs.Identify(p, cfg, s.Options(opts))
	opts.Shard = sh
	what := fmt.Sprintf("spec %s: %s %s%s", s.Name, p.Name, cfg, onlyString(opts.Only, opts.With))
	if merge {
		return mergeSearch("run", searchDir(flags.dir, opts), opts.SearchIdentity(), &mergeOpts{}, stdout, stderr)
	}
	if err := resume.apply(&opts, opts.Dir, stdout); err != nil {
		return usageErr(stderr, "run", "%v", err)
	}
	ctx, stop := interrupted()
	defer stop()
	fmt.Fprintf(stdout, "cutcheck %s: checking %s, shard %v\n", version, what, sh)
	rep, err := p.Check(ctx, cfg, opts)
	if err != nil {
		return searchErr(stderr, "run", err)
	}
	return finishShard(shardFile{Identity: opts.SearchIdentity(), Model: what, Spec: &s, SpecName: s.Name, ShardReport: explore.ShardReport{Shard: sh, Report: rep}}, searchDir(flags.dir, opts), "run", stdout, stderr)
}

// finishShard writes a finished shard's result and says where. An
// incomplete shard writes nothing: a result is written only by a shard
// that finished, so every file a merge finds is a whole shard. A shard
// that holds a violation exits 1, as check does (run's too: the shard's
// own verdict; merge judges the spec), its result written all the same.
func finishShard(f shardFile, dir, cmd string, stdout, stderr io.Writer) int {
	fmt.Fprint(stdout, f.Report.Summary())
	if sp := f.Report.ShardSplit; sp != nil {
		fmt.Fprintf(stdout, "shard key: %v\n", sp)
		f.Shard.Depth = sp.Depth
	}
	if f.Report.Verdict == explore.Incomplete {
		fmt.Fprintf(stderr, "%s %s: shard %v did not finish; no result written (run it again, with --dir and --resume to continue from its checkpoint)\n", progName, cmd, f.Shard)
		return exitIncomplete
	}
	path, err := writeShard(dir, f)
	if err != nil {
		fmt.Fprintf(stderr, "%s %s: writing the shard result: %v\n", progName, cmd, err)
		return exitError
	}
	fmt.Fprintf(stdout, "shard result: %s (combine all %d with '%s merge %s')\n", path, f.Shard.Count, progName, dir)
	if f.Report.Verdict == explore.Violated {
		return exitViolated
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
		return explore.Shard{}, fmt.Errorf("--shard: want i/N, auto/N or merge/N with 1 ≤ N ≤ 65536, got %q", spec)
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

// shardFile is one shard's result: the envelope's result.
type shardFile struct {
	// Identity is the search's (Options.SearchIdentity, which the shards
	// of one search share); merge refuses results of different ones.
	Identity explore.Identity `json:"identity"`
	// Model names the search for people: protocol, bounds, mutation,
	// properties.
	Model string `json:"model"`
	// Spec is the spec file a shard of 'run' checks: merge judges the
	// merged verdict against its expectation.
	Spec     *specs.Spec `json:"spec,omitempty"`
	SpecName string      `json:"spec_name,omitempty"`
	explore.ShardReport
}

// shardEnvelope is a shard result on disk: the result and a checksum of
// it, so that a file cut short or edited by hand is refused.
type shardEnvelope struct {
	Format   string          `json:"format"`
	Checksum string          `json:"checksum"` // of the result's compact JSON
	Result   json.RawMessage `json:"result"`
}

func checksum(compact []byte) string { return fmt.Sprintf("xxh64:%016x", xxhash.Sum64(compact)) }

func shardFileName(sh explore.Shard) string {
	return fmt.Sprintf("shard-%d-of-%d.json", sh.Index, sh.Count)
}

// writeShard writes a shard's result atomically into dir (made if need
// be): a reader never sees part of it.
func writeShard(dir string, f shardFile) (string, error) {
	raw, err := json.Marshal(f)
	if err != nil {
		return "", err
	}
	data, err := json.MarshalIndent(shardEnvelope{Format: shardFormat, Checksum: checksum(raw), Result: raw}, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
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

// readShard reads one shard result, refusing a damaged or foreign file.
func readShard(name string) (shardFile, error) {
	var f shardFile
	data, err := os.ReadFile(name)
	if err != nil {
		return f, err
	}
	var env shardEnvelope
	if err := json.Unmarshal(data, &env); err != nil {
		return f, fmt.Errorf("%s: not a shard result: %v", name, err)
	}
	if env.Format != shardFormat {
		return f, fmt.Errorf("%s: format %q, want %q", name, env.Format, shardFormat)
	}
	var compact bytes.Buffer
	if env.Result == nil || json.Compact(&compact, env.Result) != nil || checksum(compact.Bytes()) != env.Checksum {
		return f, fmt.Errorf("%s: damaged or edited: its result does not match its checksum", name)
	}
	dec := json.NewDecoder(&compact)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("%s: not a shard result: %v", name, err)
	}
	if f.Spec != nil {
		f.Spec.Name = f.SpecName
	}
	return f, nil
}

// shardFiles finds the shard results of one search: those in dir, or in
// its one subdirectory holding some (a --shard-dir); a --shard-dir
// holding the results of several searches is refused, naming them.
func shardFiles(dir string) ([]string, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory of shard results", dir)
	}
	glob := func(d string) []string {
		names, _ := filepath.Glob(filepath.Join(d, "shard-*-of-*.json"))
		return names
	}
	if names := glob(dir); len(names) > 0 {
		return names, nil
	}
	subs, _ := filepath.Glob(filepath.Join(dir, "*", "shard-*-of-*.json"))
	dirs := map[string]bool{}
	for _, n := range subs {
		dirs[filepath.Dir(n)] = true
	}
	switch len(dirs) {
	case 0:
		return nil, fmt.Errorf("%s holds no shard results (shard-I-of-N.json)", dir)
	case 1:
		return subs, nil
	}
	var list []string
	for d := range dirs {
		list = append(list, filepath.Base(d))
	}
	sort.Strings(list)
	return nil, fmt.Errorf("%s holds the shards of %d searches (%s): merge one of its directories, or run the shards' command with --shard merge/N", dir, len(dirs), strings.Join(list, ", "))
}

// readShards reads the shard results of dir (see shardFiles), refusing
// what is not one search: identity is the search's (from the command's
// flags, for --shard merge/N), or nil to take the first file's.
func readShards(dir string, identity explore.Identity) (f shardFile, parts []explore.ShardReport, err error) {
	names, err := shardFiles(dir)
	if err != nil {
		return f, nil, err
	}
	sort.Strings(names)
	given := identity != nil
	for i, name := range names {
		g, err := readShard(name)
		if err != nil {
			return f, nil, err
		}
		if i == 0 {
			f = g
			if !given {
				identity = g.Identity
			}
		}
		if field, here, there, differ := identity.Diff(g.Identity); differ {
			if given {
				return f, nil, fmt.Errorf("%s is a shard of another search: %s is %q there, %q here", name, field, there, here)
			}
			return f, nil, fmt.Errorf("%s and %s are shards of different searches: %s is %q in one, %q in the other", names[0], name, field, here, there)
		}
		parts = append(parts, g.ShardReport)
	}
	return f, parts, nil
}

type mergeOpts struct {
	jsonOut, traceJSON, html string
	fullStates               bool
	stdoutJSON               bool // certify --shard merge/N --json: the merged certify result as JSON on stdout
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
	if parts, err := partFiles(fs.Arg(0)); err != nil || len(parts) > 0 {
		if err != nil {
			return usageErr(stderr, "merge", "%v", err)
		}
		return mergeParts(parts, o, stdout, stderr)
	}
	return mergeSearch("merge", fs.Arg(0), nil, o, stdout, stderr)
}

// mergeSearch merges the shard results in dir; identity, when not nil, is
// the search they must be of.
func mergeSearch(cmd, dir string, identity explore.Identity, o *mergeOpts, stdout, stderr io.Writer) int {
	first, parts, err := readShards(dir, identity)
	if err != nil {
		fmt.Fprintf(stderr, "%s %s: %v\n", progName, cmd, err)
		return exitUsage
	}
	outs, err := openOutputs(o.jsonOut, o.traceJSON, o.html)
	if err != nil {
		return usageErr(stderr, cmd, "%v", err)
	}
	defer outs.discard()
	rep, balance, err := explore.Merge(parts)
	if err != nil {
		fmt.Fprintf(stderr, "%s %s: %s: %v\n", progName, cmd, dir, err)
		return exitUsage
	}
	rep.Identity = first.Identity
	fmt.Fprintf(stdout, "cutcheck %s: merged %d shards of %s (search %s)\n", version, len(parts), first.Model, first.Identity.Fingerprint())
	fmt.Fprint(stdout, rep.Summary())
	fmt.Fprintf(stdout, "shards:\n")
	for _, b := range balance {
		fmt.Fprintf(stdout, "  %-6v owned %12d  shared %10d  %s\n", b.Shard, b.Owned, b.Shared, b.Elapsed.Round(1e6))
	}
	if sp := rep.ShardSplit; sp != nil {
		fmt.Fprintf(stdout, "shard key: %v\n", sp)
	}
	c := explore.Cost(balance, rep.Stats.Distinct)
	fmt.Fprintf(stdout, "split overhead: %.1f%% of the states undetermined, explored by all %d shards (%.2f× the single run's states in all); busiest shard owns %.2f× the mean\n",
		100*c.Shared, len(balance), c.Work, c.Balance)
	if rep.Violation != nil {
		fmt.Fprintf(stdout, "\nCounterexample (%d steps):\n%s", len(rep.Violation.Steps)-1, rep.Violation.Text(o.fullStates))
	}
	if err := outs.write(rep, first.Model); err != nil {
		fmt.Fprintf(stderr, "%s %s: %v\n", progName, cmd, err)
		return exitError
	}
	if spec := first.Spec; spec != nil {
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
