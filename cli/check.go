package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cutcheck/cutcheck/cli/internal/picture"
	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/mutations"
	"github.com/cutcheck/cutcheck/protocols"
	"github.com/cutcheck/cutcheck/specs"
)

type checkOpts struct {
	engine                            engineFlags
	keys, values, events, chunks, txn int
	mode, mutation, initial, history  string
	sink                              string
	onset, coordBase                  int
	noops, wholeServer                bool
	jsonOut, traceJSON, html          string
	bundle                            string
	fullStates, all                   bool
	only, with                        []string
	shard                             shardFlags
	sim                               simFlags
	resume                            resumeFlag
}

func checkFlags() (*pflag.FlagSet, *checkOpts) {
	o := &checkOpts{}
	fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
	fs.IntVar(&o.keys, "keys", 0, "keys K (default: the protocol's)")
	fs.IntVar(&o.values, "values", 0, "values V (default: the protocol's)")
	fs.IntVar(&o.events, "events", 0, "row events E the source commits at most (default: the protocol's)")
	fs.IntVar(&o.chunks, "chunks", 0, "units/chunks C (default: the protocol's)")
	fs.IntVar(&o.txn, "txn", 0, "row events per transaction T (default: the protocol's)")
	fs.StringVar(&o.mode, "mode", "", "protocol mode (dump: trusted or uncertain; composite: mixed or tablesync)")
	fs.StringVar(&o.mutation, "mutation", "", "inject a named mutation (see '"+progName+" list')")
	fs.StringVar(&o.sink, "sink", "", "the sink's merge rule: last-writer-wins (the replay of §6), version-max, insert-ignore or upsert-only (default: the protocol's)")
	fs.BoolVar(&o.noops, "noops", false, "the source also commits no-op writes: an update to the current value, a delete of an absent key")
	fs.StringVar(&o.history, "history", "", "fix the source's first transactions, separated by ';', e.g. 'k0=1; k1=2 k0=⊥' (0 or ⊥ deletes)")
	fs.IntVar(&o.onset, "onset", 0, "with early-common-onset: claim exactly this c*, at the end of the run (Prop 2)")
	fs.IntVar(&o.coordBase, "coord-base", 1, "the log's first position: the positions sink rules compare and traces show start here (e.g. 8 or 254, to cross 9 → 10 or 255 → 256); the states and counts are those of 1")
	fs.BoolVar(&o.wholeServer, "whole-server", false, "the log is the whole server's (§7.7): the source also writes key K, outside the scope, whose events every capture must skip")
	fs.StringVar(&o.initial, "initial", "", "the store before the history starts, one value per key (0 = absent), e.g. 1,0,2, or any: every store (default: empty)")
	fs.StringVar(&o.jsonOut, "json", "", "write the machine-readable result to this file")
	fs.StringVar(&o.traceJSON, "trace-json", "", "write the counterexample trace as JSON to this file")
	fs.StringVar(&o.html, "html", "", "write the counterexample as a self-contained HTML picture to this file")
	fs.StringVar(&o.bundle, "bundle", "", "write the counterexample's run as an evidence bundle to this file (for "+progName+" certify)")
	fs.BoolVar(&o.fullStates, "full-states", false, "print whole states in traces instead of what changed")
	fs.StringSliceVar(&o.only, "only", nil, "check only these invariants (comma-separated names from '"+progName+" list'); sometimes-properties are always reported")
	fs.StringSliceVar(&o.with, "with", nil, "also check these opt-in invariants (e.g. no-duplicate-delivery, for exactly-once sinks)")
	fs.BoolVar(&o.all, "all", false, "explore once and report every invariant, opt-in ones too, with its shortest counterexample, worst class first (as TLC's -continue)")
	o.engine.register(fs)
	o.shard.register(fs)
	o.sim.register(fs)
	o.resume.register(fs)
	return fs, o
}

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs, o := checkFlags()
	if code := parse(fs, args, stdout, stderr); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		return usageErr(stderr, "check", "expected one protocol name, got %d arguments", fs.NArg())
	}
	p, err := protocols.Lookup(fs.Arg(0))
	if err != nil {
		return usageErr(stderr, "check", "%v", err)
	}
	cfg := p.Defaults
	set := func(flag string, v int, dst *int) {
		if fs.Changed(flag) {
			*dst = v
		}
	}
	set("keys", o.keys, &cfg.Keys)
	set("values", o.values, &cfg.Values)
	set("events", o.events, &cfg.Events)
	set("chunks", o.chunks, &cfg.Chunks)
	set("txn", o.txn, &cfg.Txn)
	if o.mode != "" {
		cfg.Mode = o.mode
	}
	cfg.NoOps = o.noops
	cfg.WholeServer = o.wholeServer
	if fs.Changed("sink") {
		r, err := model.LookupSink(o.sink)
		if err != nil {
			return usageErr(stderr, "check", "--sink: %v", err)
		}
		cfg.Sink = r
	}
	if o.initial == "any" {
		cfg.InitialAny = true
	} else if o.initial != "" {
		init, err := parseInitial(o.initial)
		if err != nil {
			return usageErr(stderr, "check", "--initial: %v", err)
		}
		cfg.Initial = init
	}
	if o.history != "" {
		h, err := protocols.ParseHistory(strings.Split(o.history, ";"))
		if err != nil {
			return usageErr(stderr, "check", "--history: %v", err)
		}
		cfg.History = h
	}
	if fs.Changed("coord-base") {
		if o.coordBase < 1 || o.coordBase > protocols.MaxCoordBase {
			return usageErr(stderr, "check", "--coord-base: %d is not a first position (1..%d)", o.coordBase, protocols.MaxCoordBase)
		}
		cfg.CoordBase = o.coordBase
	}
	if fs.Changed("onset") {
		if o.onset < 0 || o.onset >= model.MaxLog {
			return usageErr(stderr, "check", "--onset: %d is not a coordinate (0..%d)", o.onset, model.MaxLog-1)
		}
		cfg.Onset = uint8(o.onset + 1)
	}
	if o.mutation != "" {
		m, err := mutations.Lookup(o.mutation)
		if err != nil {
			return usageErr(stderr, "check", "%v", err)
		}
		if !slices.Contains(p.Faults, m.Fault) {
			return usageErr(stderr, "check", "mutation %s does not apply to %s (it takes: %s)", m.Name(), p.Name, protocols.FaultList(p.Faults))
		}
		if err := p.Replaces(m.Fault); err != nil {
			return usageErr(stderr, "check", "--mutation %s: %v", m.Name(), err)
		}
		if m.Mode != "" && fs.Changed("mode") && cfg.Mode != m.Mode {
			return usageErr(stderr, "check", "mutation %s needs --mode %s", m.Name(), m.Mode)
		}
		if m.Mode != "" {
			cfg.Mode = m.Mode
		}
		cfg.Fault = m.Fault
	}
	if err := p.Validate(cfg); err != nil {
		return usageErr(stderr, "check", "%v", err)
	}
	opts, err := o.engine.options(stderr)
	if err != nil {
		return usageErr(stderr, "check", "%v", err)
	}
	for _, sel := range []struct {
		flag  string
		names []string
	}{{"only", o.only}, {"with", o.with}} {
		flag := sel.flag
		for _, name := range sel.names {
			known, optIn := false, false
			for _, q := range p.Properties(cfg) {
				if q.Name == name && q.Kind != explore.Sometimes {
					known, optIn = true, q.OptIn
				}
			}
			if !known {
				return usageErr(stderr, "check", "--%s: %s has no invariant %q", flag, p.Name, name)
			}
			if flag == "with" && !optIn {
				return usageErr(stderr, "check", "--with: %s is checked without asking (--with adds opt-in invariants only; --only selects)", name)
			}
		}
	}
	if opts.Symmetry && cfg.History.N > 0 {
		return usageErr(stderr, "check", "--symmetry: %v; run it without --symmetry", protocols.ErrHistorySymmetry)
	}
	opts.Only, opts.With = o.only, o.with
	opts = specs.Identify(p, cfg, opts)
	what := p.Name + " " + cfg.String()
	merge := false
	if o.shard.spec != "" {
		if opts.Shard, merge, err = o.shard.parse(); err != nil {
			return usageErr(stderr, "check", "%v", err)
		}
		if opts.Symmetry {
			return usageErr(stderr, "check", "--symmetry and --shard cannot be combined (a shard key is of concrete states)")
		}
		what += onlyString(o.only, o.with)
	}
	if err := o.sim.apply(fs, &opts); err != nil {
		return usageErr(stderr, "check", "%v", err)
	}
	if merge {
		return mergeSearch("check", searchDir(o.shard.dir, opts), opts.SearchIdentity(),
			&mergeOpts{jsonOut: o.jsonOut, traceJSON: o.traceJSON, html: o.html, fullStates: o.fullStates}, stdout, stderr)
	}
	if err := o.resume.apply(&opts, o.engine.dir, stdout); err != nil {
		return usageErr(stderr, "check", "%v", err)
	}
	opts.Continue = o.all
	if o.all && (opts.Shard.Count > 0 || opts.Simulate != nil || opts.Checkpoint != "") {
		return usageErr(stderr, "check", "--all is for one whole search: not with --shard, --simulate or --resume")
	}
	discipline, noBundle := p.Discipline(cfg.Mode)
	if o.bundle != "" && noBundle != nil {
		return usageErr(stderr, "check", "--bundle: %v", noBundle)
	}
	outs, err := openOutputs(o.jsonOut, o.traceJSON, o.html)
	if err != nil {
		return usageErr(stderr, "check", "%v", err)
	}
	defer outs.discard()
	bundle, err := openOut("--bundle", o.bundle)
	if err != nil {
		return usageErr(stderr, "check", "%v", err)
	}
	defer bundle.discard()
	text := outs.to(stdout, stderr)
	if bundle.toStdout() {
		if text != stdout {
			return usageErr(stderr, "check", "only one output can be - (standard output)")
		}
		bundle.std, text = stdout, stderr
	}
	stdout = text
	ctx, stop := interrupted()
	defer stop()
	fmt.Fprintf(stdout, "cutcheck %s: checking %s\n", version, what)
	if opts.Shard.Count > 0 {
		fmt.Fprintf(stdout, "shard %v: exploring the states whose key it owns, and the undetermined ones\n", opts.Shard)
	}
	rep, err := p.Check(ctx, cfg, opts)
	if se := (*protocols.SymmetryError)(nil); errors.As(err, &se) {
		return usageErr(stderr, "check", "--symmetry: %v; run it without --symmetry", se)
	}
	if errors.Is(err, explore.ErrNoSymmetry) {
		flag := map[bool]string{false: "--symmetry", true: "--check-symmetry"}[opts.CheckSymmetry]
		if errors.Is(err, protocols.ErrEmissionSymmetry) || errors.Is(err, protocols.ErrHistorySymmetry) {
			return usageErr(stderr, "check", "%s: %v; run it without %s", flag, err, flag)
		}
		return usageErr(stderr, "check", "%s: %s declares no symmetry; run it without %s", flag, p.Name, flag)
	}
	if err != nil {
		return searchErr(stderr, "check", err)
	}
	rep.Identity = opts.SearchIdentity()
	if opts.Shard.Count > 0 {
		return finishShard(shardFile{Identity: rep.Identity, Model: what, ShardReport: explore.ShardReport{Shard: opts.Shard, Report: rep}}, searchDir(o.shard.dir, opts), "check", stdout, stderr)
	}
	fmt.Fprint(stdout, withConsequence(rep.Summary(), rep, o.all))
	uncheckedHint(stdout, rep)
	if o.all {
		worstFirst(rep.Violations)
		printAll(stdout, rep, p.Properties(cfg), o.fullStates)
	} else if rep.Violation != nil {
		fmt.Fprintf(stdout, "\nCounterexample (%d steps):\n%s", len(rep.Violation.Steps)-1, rep.Violation.Text(o.fullStates))
	}
	if err := outs.write(rep, p.Name+" "+cfg.String()); err != nil {
		fmt.Fprintf(stderr, "%s check: %v\n", progName, err)
		return exitError
	}
	if rep.Violation != nil {
		if err := bundle.write(func(w io.Writer) error { return writeBundle(w, rep.Violation, discipline) }); err != nil {
			fmt.Fprintf(stderr, "%s check: %v\n", progName, err)
			return exitError
		}
	}
	return verdictCode(rep.Verdict)
}

func verdictCode(v explore.Verdict) int {
	switch v {
	case explore.Pass:
		return exitOK
	case explore.Violated:
		return exitViolated
	}
	return exitIncomplete
}

// outputs are check's optional result files, opened before the search.
type outputs struct{ json, traceJSON, html *outFile }

func openOutputs(jsonOut, traceJSON, html string) (*outputs, error) {
	o := &outputs{}
	var err error
	if o.json, err = openOut("--json", jsonOut); err == nil {
		if o.traceJSON, err = openOut("--trace-json", traceJSON); err == nil {
			o.html, err = openOut("--html", html)
		}
	}
	if n := btoi(o.json.toStdout()) + btoi(o.traceJSON.toStdout()) + btoi(o.html.toStdout()); err == nil && n > 1 {
		err = errors.New("only one output can be - (standard output)")
	}
	if err != nil {
		o.discard()
		return nil, err
	}
	return o, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// to points an output named "-" at stdout and returns where the report's
// text goes: stdout, or stderr when stdout carries the output.
func (o *outputs) to(stdout, stderr io.Writer) io.Writer {
	for _, f := range []*outFile{o.json, o.traceJSON, o.html} {
		if f.toStdout() {
			f.std = stdout
			return stderr
		}
	}
	return stdout
}

// write writes the result files: the report always, the trace and the
// picture when there is a counterexample (otherwise they are not created).
func (o *outputs) write(rep explore.Report, title string) error {
	if err := o.json.write(jsonTo(rep)); err != nil {
		return err
	}
	if rep.Violation == nil {
		return nil
	}
	if err := o.traceJSON.write(jsonTo(rep.Violation)); err != nil {
		return err
	}
	if len(rep.Violations) > 0 {
		return o.html.write(func(w io.Writer) error { return allHTML(w, title, rep) })
	}
	return o.html.write(func(w io.Writer) error { return picture.WriteHTML(w, title, rep.Violation) })
}

func (o *outputs) discard() {
	o.json.discard()
	o.traceJSON.discard()
	o.html.discard()
}

// jsonTo writes v as indented JSON.
func jsonTo(v any) func(io.Writer) error {
	return func(w io.Writer) error {
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(data, '\n'))
		return err
	}
}

// parseInitial reads "1,0,2" as an initial store.
func parseInitial(s string) (model.Store, error) {
	var st model.Store
	parts := strings.Split(s, ",")
	if len(parts) > model.MaxKeys {
		return st, fmt.Errorf("%d values for at most %d keys", len(parts), model.MaxKeys)
	}
	for k, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < 0 || v > 255 {
			return st, fmt.Errorf("%q is not a value (0 = absent, 1..V)", p)
		}
		st[k] = model.Value(v)
	}
	return st, nil
}

// withConsequence adds to the verdict line what the violations cost a
// sink: a final loss names its invariants; a transient failure alone is
// nothing lost at rest when --all checked every final invariant to the end,
// and otherwise says that the search stopped at it.
func withConsequence(summary string, rep explore.Report, all bool) string {
	const line = "verdict:     violated\n"
	if rep.Verdict != explore.Violated || !strings.HasPrefix(summary, line) {
		return summary
	}
	vs := rep.Violations
	if !all {
		vs = []*explore.TraceReport{rep.Violation}
	}
	var final, other []string
	for _, v := range vs {
		switch {
		case v == nil || v.Class == "":
			return summary // a deadlock costs nothing to name
		case v.Class == "final":
			final = append(final, v.Property)
		case !slices.Contains(other, v.Class):
			other = append(other, v.Class)
		}
	}
	note := ""
	switch {
	case len(final) > 0:
		note = "final: " + strings.Join(final, ", ") + " — the sink is wrong at rest"
	case all && !rep.Unfinished:
		note = strings.Join(other, ", ") + " only: nothing lost at rest"
	case all:
		note = strings.Join(other, ", ") + "; the search stopped early: whether anything is lost at rest is undecided"
	default:
		note = strings.Join(other, ", ") + "; the search stopped at it: --all tells whether anything is lost at rest"
	}
	return "verdict:     violated (" + note + ")\n" + strings.TrimPrefix(summary, line)
}
