package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/specs"
)

type runOpts struct {
	engine engineFlags
	shard  shardFlags
}

func runFlags() (*pflag.FlagSet, *runOpts) {
	o := &runOpts{}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	o.engine.register(fs)
	o.shard.register(fs)
	return fs, o
}

// runSpecs is `cutcheck run FILE...`.
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
		data, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintf(stderr, "cutcheck run: %v\n", err)
			return exitError
		}
		s, err := specs.Parse(file, data)
		if err != nil {
			fmt.Fprintf(stderr, "cutcheck run: %v\n", err)
			return exitUsage
		}
		list = append(list, s)
	}
	opts, err := o.engine.options(stderr)
	if err != nil {
		return usageErr(stderr, "run", "%v", err)
	}
	if o.shard.spec != "" {
		if len(list) != 1 {
			return usageErr(stderr, "run", "--shard runs one spec file, got %d", len(list))
		}
		return runSpecShard(list[0], opts, &o.shard, stdout, stderr)
	}
	outcomes, code := runAll(list, opts, stdout, stderr)
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
	fs.StringVar(&o.out, "out", "results", "directory for the table, the kill matrix and the counterexamples (\"\" = write nothing)")
	fs.StringVar(&o.specsDir, "specs", "", "read spec files from this directory instead of the built-in ones")
	fs.BoolVar(&o.matrix, "matrix", true, "also compute the mutation × invariant kill matrix")
	o.engine.register(fs)
	fs.Lookup("progress").DefValue = "0s"
	o.engine.progress = 0
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
	var list []specs.Spec
	var err error
	if o.specsDir != "" {
		list, err = specs.Load(os.DirFS(o.specsDir))
	} else {
		list, err = specs.Embedded()
	}
	if err != nil {
		fmt.Fprintf(stderr, "cutcheck reproduce: %v\n", err)
		return exitUsage
	}
	if o.quick {
		var q []specs.Spec
		for _, s := range list {
			if s.Quick {
				q = append(q, s)
			}
		}
		list = q
	}
	if len(list) == 0 {
		fmt.Fprintln(stderr, "cutcheck reproduce: no spec files to run")
		return exitUsage
	}
	opts, err := o.engine.options(stderr)
	if err != nil {
		return usageErr(stderr, "reproduce", "%v", err)
	}
	outcomes, code := runAll(list, opts, stdout, stderr)
	if code == exitError {
		return code
	}
	var matrix []specs.Kill
	if o.matrix && code == exitOK {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		matrix, err = specs.KillMatrix(ctx, outcomes, opts)
		stop()
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(stderr, "cutcheck reproduce: interrupted; the kill matrix is partial")
			code, err = exitIncomplete, nil
		}
		if err != nil {
			fmt.Fprintf(stderr, "cutcheck reproduce: %v\n", err)
			return exitError
		}
		fmt.Fprintf(stdout, "\n%s", specs.MatrixMarkdown(matrix))
	}
	if o.out != "" {
		if err := writeResults(o.out, outcomes, matrix, o.quick); err != nil {
			fmt.Fprintf(stderr, "cutcheck reproduce: %v\n", err)
			return exitError
		}
		fmt.Fprintf(stdout, "\nresults written to %s\n", o.out)
	}
	if code != exitOK { // interrupted: the rows so far were kept
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

// runAll runs every spec, printing one row per spec as it finishes. Ctrl-C
// stops the current run and skips the rest; the rows so far are kept.
func runAll(list []specs.Spec, opts explore.Options, stdout, stderr io.Writer) ([]specs.Outcome, int) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	w := 4
	for _, s := range list {
		w = max(w, len(s.Name))
	}
	row := fmt.Sprintf("%%-%ds  %%11s  %%11s  %%5s  %%-24s  %%-24s  %%9s  %%s\n", w)
	fmt.Fprintf(stdout, row, "spec", "generated", "distinct", "depth", "verdict", "expected", "time", "")
	var out []specs.Outcome
	for _, s := range list {
		o, err := specs.Run(ctx, s, opts)
		if err != nil {
			fmt.Fprintf(stderr, "cutcheck: %v\n", err)
			return out, exitError
		}
		out = append(out, o)
		mark := "ok"
		if !o.OK {
			mark = "MISMATCH: " + o.Why
		}
		st := o.Report.Stats
		fmt.Fprintf(stdout, row, s.Name, strconv.FormatUint(st.Generated, 10), strconv.FormatUint(st.Distinct, 10),
			strconv.Itoa(st.Depth), o.Got, s.Expect, o.Elapsed.Round(time.Millisecond).String(), mark)
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "cutcheck: interrupted; remaining specs skipped")
			return out, exitIncomplete
		}
	}
	return out, exitOK
}

func outcomesCode(out []specs.Outcome) int {
	for _, o := range out {
		if !o.OK {
			return exitViolated
		}
	}
	return exitOK
}

// writeResults writes the table (Markdown and JSON), the kill matrix and
// every counterexample (text, JSON, HTML) into dir.
func writeResults(dir string, out []specs.Outcome, matrix []specs.Kill, quick bool) error {
	traces := filepath.Join(dir, "traces")
	if err := os.MkdirAll(traces, 0o755); err != nil {
		return err
	}
	name := "table"
	if quick {
		name = "table-quick"
	}
	if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte(specs.TableMarkdown(out)), 0o644); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, name+".json"), specs.TableJSON(out)); err != nil {
		return err
	}
	if matrix != nil {
		if err := os.WriteFile(filepath.Join(dir, "kill-matrix.md"), []byte(specs.MatrixMarkdown(matrix)), 0o644); err != nil {
			return err
		}
		if err := writeJSON(filepath.Join(dir, "kill-matrix.json"), matrix); err != nil {
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
		if err := writeJSON(base+".json", v); err != nil {
			return err
		}
		if err := writeHTML(base+".html", o.Spec.Name+": "+o.Spec.Protocol+" "+o.Config.String(), v); err != nil {
			return err
		}
	}
	return nil
}
