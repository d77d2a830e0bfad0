package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/cutcheck/cutcheck/cli/internal/picture"
	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/specs"
)

type runOpts struct {
	engine engineFlags
	shard  shardFlags
	resume resumeFlag
}

func runFlags() (*pflag.FlagSet, *runOpts) {
	o := &runOpts{}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	o.engine.register(fs)
	o.shard.register(fs)
	o.resume.register(fs)
	return fs, o
}

// runSpecs is `cutcheck run FILE...`. Every file is read and validated
// before the first is run, so a bad set is refused as a whole.
func runSpecs(args []string, stdout, stderr io.Writer) int {
	fs, o := runFlags()
	if code := parse(fs, args, stdout, stderr); code >= 0 {
		return code
	}
	if fs.NArg() == 0 {
		return usageErr(stderr, "run", "expected one or more spec files")
	}
	var list []specs.Spec
	for _, file := range fs.Args() {
		data, err := readSpecFile(file)
		if err != nil {
			fmt.Fprintf(stderr, "%s run: %s: %v\n", progName, file, err)
			return exitUsage // a bad spec file: nothing has run
		}
		s, err := specs.Parse(file, data)
		if err != nil {
			fmt.Fprintf(stderr, "%s run: %v\n", progName, err)
			return exitUsage
		}
		list = append(list, s)
	}
	opts, err := o.engine.options(stderr)
	if err != nil {
		return usageErr(stderr, "run", "%v", err)
	}
	if err := symmetryClash(list, opts); err != nil {
		return usageErr(stderr, "run", "%v", err)
	}
	if o.shard.spec != "" {
		if len(list) != 1 {
			return usageErr(stderr, "run", "--shard runs one spec file, got %d", len(list))
		}
		if opts.Symmetry {
			return usageErr(stderr, "run", "--symmetry and --shard cannot be combined (a shard key is of concrete states)")
		}
		if list[0].Symmetry {
			return usageErr(stderr, "run", "spec %s asks for \"symmetry\", which --shard cannot use (a shard key is of concrete states)", list[0].Name)
		}
		return runSpecShard(list[0], opts, &o.shard, &o.resume, stdout, stderr)
	}
	if o.resume.on {
		return usageErr(stderr, "run", "--resume applies to one shard (--shard); use check --resume for one search")
	}
	ctx, stop := interrupted()
	defer stop()
	outcomes, code := runAll(ctx, list, opts, o.engine.run, stdout, stderr)
	if code != exitOK {
		return code
	}
	return outcomesCode(outcomes)
}

type reproduceOpts struct {
	engine   engineFlags
	quick    bool
	out      string
	specsDir string
	matrix   bool
}

func reproduceFlags() (*pflag.FlagSet, *reproduceOpts) {
	o := &reproduceOpts{}
	fs := pflag.NewFlagSet("reproduce", pflag.ContinueOnError)
	fs.BoolVar(&o.quick, "quick", false, "run only the quick subset (about a minute on 2 cores)")
	fs.StringVar(&o.out, "out", "results", "directory for the set of results (table, kill matrix, counterexamples, manifest), replaced whole only when every spec has run (\"\" = write nothing); an interrupted run writes what it finished to DIR.partial. With --quick or --specs the default is results-<name of the --specs directory>, -quick added for --quick, never the full set")
	fs.StringVar(&o.specsDir, "specs", "", "read spec files from this directory instead of the built-in ones")
	fs.BoolVar(&o.matrix, "matrix", true, "also compute the mutation × invariant kill matrix")
	o.engine.register(fs)
	fs.Lookup("progress").DefValue = "30s"
	o.engine.progress = 30 * time.Second
	return fs, o
}

// runReproduce is `cutcheck reproduce`.
func runReproduce(args []string, stdout, stderr io.Writer) int {
	fs, o := reproduceFlags()
	if code := parse(fs, args, stdout, stderr); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		return usageErr(stderr, "reproduce", "takes no arguments, got %q", strings.Join(fs.Args(), " "))
	}
	list, err := loadSpecs(o.specsDir)
	if err != nil {
		fmt.Fprintf(stderr, "%s reproduce: %v\n", progName, err)
		return exitUsage
	}
	if o.quick {
		var q []specs.Spec
		for _, s := range list {
			if s.Quick {
				q = append(q, s)
			}
		}
		if len(q) == 0 {
			return usageErr(stderr, "reproduce", "--quick: none of the %d specs is marked \"quick\"", len(list))
		}
		list = q
	}
	opts, err := o.engine.options(stderr)
	if err != nil {
		return usageErr(stderr, "reproduce", "%v", err)
	}
	if err := symmetryClash(list, opts); err != nil {
		return usageErr(stderr, "reproduce", "%v", err)
	}
	if !fs.Changed("out") {
		o.out = defaultOut(o.specsDir, o.quick)
	}
	var res *resultsSet
	if o.out != "" {
		var cleaned []string
		res, cleaned, err = openResults(o.out)
		for _, line := range cleaned {
			fmt.Fprintf(stderr, "%s reproduce: %s\n", progName, line)
		}
		if err != nil {
			return usageErr(stderr, "reproduce", "%v", err)
		}
	}
	ctx, stop := interrupted()
	defer stop()
	outcomes, code := runAll(ctx, list, opts, o.engine.run, stdout, stderr)
	if code == exitOK && outcomesCode(outcomes) == exitIncomplete {
		code = exitIncomplete // a spec stopped at --max-depth: not a set of results
	}
	complete := code == exitOK
	var matrix []specs.Kill
	if o.matrix && complete {
		n := specs.Mutated(outcomes)
		fmt.Fprintf(stdout, "\nkill matrix: %d mutated specs, each invariant checked alone\n", n)
		copies := false
		matrix, err = specs.KillMatrix(ctx, outcomes, opts, func(row string) {
			if strings.HasSuffix(row, " + copy-dropped") && !copies {
				copies = true
				fmt.Fprintf(stdout, "\nkill matrix: every positive spec again with its copy dropped, frontier-replay checked alone\n")
			}
			o.engine.run("kill matrix: " + row)
		}, func(k specs.Kill) {
			killed := "killed"
			if !k.Killed {
				killed = "NOT KILLED"
			}
			fmt.Fprintf(stdout, "  %s: %s; fails: %s\n", k.Spec, killed, strings.Join(k.Failing, ", "))
		})
		switch {
		case ctx.Err() != nil:
			fmt.Fprintf(stderr, "%s reproduce: interrupted; the kill matrix has %d of %d rows\n", progName, len(matrix), n)
			code, complete = exitIncomplete, false
		case err != nil:
			fmt.Fprintf(stderr, "%s reproduce: %v\n", progName, err)
			code, complete = exitError, false
		default:
			fmt.Fprintf(stdout, "\n%s", specs.MatrixMarkdown(matrix))
		}
	}
	if res != nil {
		info := setInfo{Quick: o.quick, SpecsDir: o.specsDir}
		if c := saveResults(res, complete, outcomes, matrix, len(list), info, stdout, stderr); c != exitOK {
			return c
		}
	}
	if code != exitOK {
		return code
	}
	if c := outcomesCode(outcomes); c != exitOK {
		return c
	}
	for _, k := range matrix {
		if !k.Killed {
			return exitViolated
		}
	}
	return exitOK
}

// readSpecFile reads a spec file named on the command line.
func readSpecFile(file string) ([]byte, error) {
	if fi, err := os.Stat(file); err == nil && fi.IsDir() {
		return nil, errors.New("is a directory; give spec files (or reproduce --specs for a directory)")
	}
	data, err := os.ReadFile(file)
	return data, pathErr(err)
}

// defaultOut is reproduce's --out when none is given: results for the full
// set of built-in specs; another directory for a subset or other specs, so
// that results/ only ever holds the full set.
func defaultOut(specsDir string, quick bool) string {
	out := "results"
	if specsDir != "" {
		if abs, err := filepath.Abs(specsDir); err == nil {
			specsDir = abs // "." names the directory it is
		}
		out += "-" + filepath.Base(specsDir)
	}
	if quick {
		out += "-quick"
	}
	return out
}

// loadSpecs reads the spec files of dir, or the built-in ones.
func loadSpecs(dir string) ([]specs.Spec, error) {
	if dir == "" {
		return specs.Embedded()
	}
	fi, err := os.Stat(dir)
	switch {
	case os.IsNotExist(err):
		return nil, fmt.Errorf("--specs: there is no directory %s", dir)
	case err != nil:
		return nil, fmt.Errorf("--specs: %v", err)
	case !fi.IsDir():
		return nil, fmt.Errorf("--specs: %s is a file; give the directory that holds the spec files", dir)
	}
	list, err := specs.Load(os.DirFS(dir))
	var se *specs.Error
	if errors.As(err, &se) {
		se.File = filepath.Join(dir, se.File)
		return nil, se
	}
	if err != nil {
		return nil, fmt.Errorf("--specs %s: %v", dir, err)
	}
	return list, nil
}

// saveResults writes a complete run's results into res's directory, or an
// incomplete run's into the partial directory beside it, and says where.
func saveResults(res *resultsSet, complete bool, out []specs.Outcome, matrix []specs.Kill, total int, info setInfo, stdout, stderr io.Writer) int {
	quickNote := ""
	if info.Quick {
		quickNote = "**Quick subset**: only the specs marked quick ran.\n\n"
	}
	if complete {
		err := writeResults(res.stage, out, matrix, info, quickNote)
		if err == nil {
			err = res.commit()
		}
		if err != nil {
			res.undo()
			fmt.Fprintf(stderr, "%s reproduce: writing the results: %v\n", progName, err)
			return exitError
		}
		fmt.Fprintf(stdout, "\nresults written to %s\n", res.out)
		return exitOK
	}
	if len(out) == 0 {
		res.undo()
		fmt.Fprintf(stderr, "%s reproduce: no spec finished; %s was left as it was\n", progName, res.out)
		return exitOK
	}
	note := fmt.Sprintf("**Partial results**: the run stopped after %d of %d specs", len(out), total)
	if len(out) == total {
		note = fmt.Sprintf("**Partial results**: every spec ran, but the kill matrix stopped after %d rows", len(matrix))
	}
	if outcomesCode(out) == exitIncomplete {
		note = "**Partial results**: some specs stopped at --max-depth before their search ended"
	}
	note += fmt.Sprintf("; %s was left as it was.\n\n", res.out)
	info.Partial = true
	err := writeResults(res.stage, out, matrix, info, note+quickNote)
	var dst string
	if err == nil {
		dst, err = res.keepPartial()
	} else {
		res.undo()
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s reproduce: writing the partial results: %v; %s was left as it was\n", progName, err, res.out)
		return exitError
	}
	fmt.Fprintf(stderr, "%s reproduce: %s was left as it was; what finished is in %s\n", progName, res.out, dst)
	return exitOK
}

// symmetryClash refuses a spec whose "symmetry" or "check-symmetry" meets
// the other given as a flag, as the two flags are refused together.
func symmetryClash(list []specs.Spec, opts explore.Options) error {
	for _, s := range list {
		if o := s.Options(opts); o.Symmetry && o.CheckSymmetry {
			return fmt.Errorf("spec %s: check-symmetry explores every concrete state; it cannot be combined with symmetry", s.Name)
		}
	}
	return nil
}

// runAll runs every spec, printing one row per spec as it finishes. A
// cancelled ctx stops the current spec, which is dropped, and skips the
// rest; the outcomes so far are returned.
func runAll(ctx context.Context, list []specs.Spec, opts explore.Options, running func(string), stdout, stderr io.Writer) ([]specs.Outcome, int) {
	w := 4
	for _, s := range list {
		w = max(w, len(s.Name))
	}
	row := fmt.Sprintf("%%-%ds  %%11s  %%11s  %%5s  %%-24s  %%-9s  %%-24s  %%9s  %%s\n", w)
	fmt.Fprintf(stdout, row, "spec", "generated", "distinct", "depth", "verdict", "class", "expected", "time", "")
	var out []specs.Outcome
	for _, s := range list {
		if ctx.Err() != nil {
			break
		}
		running(s.Name)
		o, err := specs.Run(ctx, s, opts)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", progName, err)
			if errors.Is(err, explore.ErrNoSymmetry) {
				return out, exitUsage // the spec asks for a reduction its protocol has not
			}
			return out, exitError
		}
		if ctx.Err() != nil && o.Report.Verdict == explore.Incomplete {
			fmt.Fprintf(stdout, row, s.Name, "", "", "", "interrupted", "", s.Expect, o.Elapsed.Round(time.Millisecond).String(), "")
			break
		}
		out = append(out, o)
		mark := "ok"
		switch {
		case !o.OK && o.Report.Verdict == explore.Incomplete:
			mark = "INCOMPLETE: stopped at --max-depth before the search ended"
		case !o.OK:
			mark = "MISMATCH: " + o.Why
		}
		st := o.Report.Stats
		class := "—" // what the failure costs, when a property failed
		if v := o.Report.Violation; v != nil && v.Class != "" {
			class = v.Class
		}
		fmt.Fprintf(stdout, row, s.Name, strconv.FormatUint(st.Generated, 10), strconv.FormatUint(st.Distinct, 10),
			strconv.Itoa(st.Depth), o.Got, class, s.Expect, o.Elapsed.Round(time.Millisecond).String(), mark)
	}
	if len(out) < len(list) {
		fmt.Fprintf(stderr, "%s: interrupted after %d of %d specs; the rest were skipped\n", progName, len(out), len(list))
		return out, exitIncomplete
	}
	return out, exitOK
}

// outcomesCode is the exit code of finished specs: 1 if a search that ended
// gave another verdict than expected, else 4 if one stopped at a limit
// (--max-depth) before it ended, else 0.
func outcomesCode(out []specs.Outcome) int {
	code := exitOK
	for _, o := range out {
		switch {
		case !o.OK && o.Report.Verdict != explore.Incomplete:
			return exitViolated
		case !o.OK:
			code = exitIncomplete
		}
	}
	return code
}

// writeResults writes the table (Markdown and JSON), the kill matrix and
// every counterexample (text, JSON, HTML) into dir, and last the manifest
// that lists them with their checksums; note, if any, heads the Markdown
// files.
func writeResults(dir string, out []specs.Outcome, matrix []specs.Kill, info setInfo, note string) error {
	traces := filepath.Join(dir, "traces")
	if err := os.MkdirAll(traces, 0o755); err != nil {
		return err
	}
	name := "table"
	if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte(note+specs.TableMarkdown(out)), 0o644); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, name+".json"), jsonTo(specs.TableJSON(out))); err != nil {
		return err
	}
	if open := specs.OpenMarkdown(out); open != "" {
		if err := os.WriteFile(filepath.Join(dir, "open.md"), []byte(note+open), 0o644); err != nil {
			return err
		}
	}
	if matrix != nil {
		if err := os.WriteFile(filepath.Join(dir, "kill-matrix.md"), []byte(note+specs.MatrixMarkdown(matrix)), 0o644); err != nil {
			return err
		}
		if err := writeFile(filepath.Join(dir, "kill-matrix.json"), jsonTo(matrix)); err != nil {
			return err
		}
	}
	for _, o := range out {
		v := o.Report.Violation
		if v == nil {
			continue
		}
		base := filepath.Join(traces, o.Spec.Name)
		if err := os.WriteFile(base+".txt", []byte(v.Text(false)), 0o644); err != nil {
			return err
		}
		if err := writeFile(base+".json", jsonTo(v)); err != nil {
			return err
		}
		title := o.Spec.Name + ": " + o.Spec.Protocol + " " + o.Config.String()
		if err := writeFile(base+".html", func(w io.Writer) error { return picture.WriteHTML(w, title, v) }); err != nil {
			return err
		}
	}
	return writeManifest(dir, out, info)
}

// writeFile writes a new file in the staging directory.
func writeFile(file string, fill func(io.Writer) error) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// setInfo is what a set of results says about the run that made it.
type setInfo struct {
	Quick    bool
	Partial  bool
	SpecsDir string
}

// manifest describes one set of results: what ran, on which build, and the
// checksum of every file in the set, so that the set can be told whole and
// of one run. Each spec is an object, so that more of what decides its
// search can be recorded beside its name.
type manifest struct {
	Cutcheck string            `json:"cutcheck"`
	Build    string            `json:"build"` // module version and VCS revision, or the executable's SHA-256
	Quick    bool              `json:"quick,omitempty"`
	Partial  bool              `json:"partial,omitempty"`
	SpecsDir string            `json:"specs_dir,omitempty"` // "" = the built-in specs
	Specs    []manifestSpec    `json:"specs"`
	Files    map[string]string `json:"files"` // path in the set → SHA-256, hex
}

type manifestSpec struct {
	Name     string `json:"name"`
	Expect   string `json:"expect"`
	Got      string `json:"got"`
	Identity string `json:"identity,omitempty"` // the search's fingerprint (the fields are in table.json)
}

// manifestName is the manifest's file in a set; it is written last.
const manifestName = "manifest.json"

func writeManifest(dir string, out []specs.Outcome, info setInfo) error {
	m := manifest{Cutcheck: version, Build: explore.BuildIdentity(), Quick: info.Quick, Partial: info.Partial, SpecsDir: info.SpecsDir, Files: map[string]string{}}
	for _, o := range out {
		var id string
		if len(o.Identity) > 0 {
			id = o.Identity.Fingerprint()
		}
		m.Specs = append(m.Specs, manifestSpec{Name: o.Spec.Name, Expect: o.Spec.Expect, Got: o.Got, Identity: id})
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		sum, err := fileSum(p)
		m.Files[filepath.ToSlash(rel)] = sum
		return err
	})
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, manifestName), jsonTo(m))
}

// fileSum is the SHA-256 of a file's bytes, in hex.
func fileSum(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
