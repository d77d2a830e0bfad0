package specs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/protocols"
)

// Row is one line of the results table, as JSON.
type Row struct {
	Spec      string   `json:"spec"`
	Protocol  string   `json:"protocol"`
	Bounds    string   `json:"bounds"`
	Mutation  string   `json:"mutation,omitempty"`
	Generated uint64   `json:"generated"`
	Distinct  uint64   `json:"distinct"`
	Depth     int      `json:"depth"`
	Verdict   string   `json:"verdict"`
	Class     string   `json:"class,omitempty"`       // what the failure costs (invariants.Class), when a property failed
	Steps     int      `json:"trace_steps,omitempty"` // the counterexample's length, when a property failed
	Expected  string   `json:"expected"`
	OK        bool     `json:"ok"`
	Why       string   `json:"why,omitempty"`
	Seconds   float64  `json:"seconds"`
	Rate      float64  `json:"distinct_per_second"`
	Unreached []string `json:"unreached_sometimes,omitempty"`
	Note      string   `json:"note,omitempty"`
	// Identity is the search's (Spec.Identity): the build, protocol,
	// bounds, mutation and options that produced the row.
	Identity explore.Identity `json:"identity,omitempty"`
}

// TableJSON turns outcomes into rows.
func TableJSON(out []Outcome) []Row {
	rows := make([]Row, 0, len(out))
	for _, o := range out {
		st := o.Report.Stats
		cfg := o.Config
		if o.Spec.Mutation != "" {
			cfg.Fault = protocols.None // the Mutation column names it; a variant's own fault stays in Bounds
		}
		r := Row{Spec: o.Spec.Name, Protocol: o.Spec.Protocol, Bounds: cfg.String(), Mutation: o.Spec.Mutation,
			Generated: st.Generated, Distinct: st.Distinct, Depth: st.Depth, Verdict: o.Got, Expected: o.Spec.Expect,
			OK: o.OK, Why: o.Why, Seconds: o.Elapsed.Seconds(), Note: o.Spec.Note, Identity: o.Identity}
		if s := o.Elapsed.Seconds(); s > 0 {
			r.Rate = float64(st.Distinct) / s
		}
		if v := o.Report.Violation; v != nil {
			r.Class, r.Steps = v.Class, len(v.Steps)-1
		}
		for _, reach := range o.Report.Sometimes {
			if !reach.Reached {
				r.Unreached = append(r.Unreached, reach.Name)
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// TableMarkdown renders the results table.
func TableMarkdown(out []Outcome) string {
	var b strings.Builder
	b.WriteString("| spec | protocol | bounds | mutation | generated | distinct | depth | verdict | expected | ok | time |\n")
	b.WriteString("|---|---|---|---|---:|---:|---:|---|---|---|---:|\n")
	var total time.Duration
	for _, r := range TableJSON(out) {
		ok := "yes"
		if !r.OK {
			ok = "**no**: " + r.Why
		}
		mut := r.Mutation
		if mut == "" {
			mut = "—"
		}
		verdict := r.Verdict
		if r.Class != "" {
			verdict += " (" + r.Class + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d | %d | %s | %s | %s | %.2fs |\n",
			r.Spec, r.Protocol, r.Bounds, mut, r.Generated, r.Distinct, r.Depth, verdict, r.Expected, ok, r.Seconds)
	}
	for _, o := range out {
		total += o.Elapsed
	}
	fmt.Fprintf(&b, "\n%d specs, %.1fs in all.\n", len(out), total.Seconds())
	return b.String()
}

// OpenPrefix names the specs of §6.5's open disciplines (package
// protocols/open), which reproduce also tabulates on their own.
const OpenPrefix = "open-"

// OpenMarkdown renders the open disciplines' runs: for each variant its
// obligation (the spec's note), the verdict and what a failure costs, the
// states explored and the shortest counterexample's length. "" if out has
// none.
func OpenMarkdown(out []Outcome) string {
	var b strings.Builder
	for _, r := range TableJSON(out) {
		if !strings.HasPrefix(r.Spec, OpenPrefix) {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("# The open disciplines of §6.5, bounded\n\n")
			b.WriteString("The paper records these four disciplines as open; each row is bounded evidence at the bounds shown, not a theorem.\n")
			b.WriteString("Traces are in `traces/<spec>.txt` (and `.html`).\n\n")
			b.WriteString("| spec | discipline | bounds | obligation | expected | verdict | class | distinct | depth | trace steps | ok |\n")
			b.WriteString("|---|---|---|---|---|---|---|---:|---:|---:|---|\n")
		}
		ok, class, steps := "yes", "—", "—"
		if !r.OK {
			ok = "**no**: " + r.Why
		}
		if r.Class != "" {
			class, steps = r.Class, fmt.Sprint(r.Steps)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %d | %d | %s | %s |\n",
			r.Spec, r.Protocol, r.Bounds, r.Note, r.Expected, r.Verdict, class, r.Distinct, r.Depth, steps, ok)
	}
	return b.String()
}

// Kill is one row of the kill matrix: a mutated spec and the invariants that
// fail when each is checked alone.
type Kill struct {
	Spec     string   `json:"spec"`
	Protocol string   `json:"protocol"`
	Mutation string   `json:"mutation"`
	Expected string   `json:"expected"`
	Failing  []string `json:"failing"`
	Checked  []string `json:"checked"`
	Killed   bool     `json:"killed"` // the expected invariant fails
}

// KillMatrix re-runs every mutated spec once per invariant of its protocol,
// with only that invariant checked, and records which fail. onRow, when
// not nil, is called with each row as it is finished. A cancelled ctx
// returns the rows finished so far and ctx's error.
func KillMatrix(ctx context.Context, out []Outcome, opts explore.Options, onStart func(row string), onRow func(Kill)) ([]Kill, error) {
	var ks []Kill
	for _, o := range out {
		if o.Spec.Mutation == "" {
			continue
		}
		if onStart != nil {
			onStart(o.Spec.Name)
		}
		_, p, err := o.Spec.Config()
		if err != nil {
			return nil, err
		}
		k := Kill{Spec: o.Spec.Name, Protocol: p.Name, Mutation: o.Spec.Mutation, Expected: o.Spec.Expect}
		// A deadlock stops a run before the invariant it checks is judged:
		// it is its own column, and the invariant's run is made again
		// without deadlock checking. Deadlock is judged once a run found
		// one or explored everything.
		deadlock, judged := false, false
		for _, prop := range p.Properties(o.Config) {
			if prop.Kind == explore.Sometimes {
				continue
			}
			one := opts
			one.Only = []string{prop.Name}
			rep, err := p.Check(ctx, o.Config, one)
			if err == nil && rep.Verdict == explore.Violated && rep.Violation.Property == "deadlock" {
				deadlock, judged = true, true
				one.NoDeadlock = true
				rep, err = p.Check(ctx, o.Config, one)
			} else if err == nil && rep.Verdict == explore.Pass {
				judged = true
			}
			if err != nil {
				return nil, err
			}
			if ctx.Err() != nil {
				return ks, ctx.Err()
			}
			k.Checked = append(k.Checked, prop.Name)
			if rep.Verdict == explore.Violated {
				k.Failing = append(k.Failing, rep.Violation.Property)
			}
		}
		if judged && !opts.NoDeadlock {
			k.Checked = append(k.Checked, "deadlock")
		}
		if deadlock {
			k.Failing = append(k.Failing, "deadlock")
		}
		for _, f := range k.Failing {
			k.Killed = k.Killed || f == k.Expected
		}
		ks = append(ks, k)
		if onRow != nil {
			onRow(k)
		}
	}
	copies, err := copyKills(ctx, out, opts, onStart, onRow)
	return append(ks, copies...), err
}

// copyKills runs every positive spec again with its copy dropped and frontier
// replay checked alone: a pass is evidence only if the same run fails when the
// capture's copied rows never reach the sink (S-OBS, Thm 1).
func copyKills(ctx context.Context, out []Outcome, opts explore.Options, onStart func(row string), onRow func(Kill)) ([]Kill, error) {
	var ks []Kill
	for _, o := range out {
		if o.Spec.Mutation != "" || o.Spec.Expect != "pass" {
			continue
		}
		_, p, err := o.Spec.Config()
		if err != nil {
			return nil, err
		}
		// A variant built with a fault of its own (Defaults.Fault) cannot
		// take a second one: replacing it would kill another design.
		if !slices.Contains(p.Faults, protocols.CopyDropped) || p.Replaces(protocols.CopyDropped) != nil {
			continue
		}
		cfg := o.Config
		cfg.Fault = protocols.CopyDropped
		const want = "frontier-replay"
		one := opts
		one.Only = []string{want}
		name := o.Spec.Name + " + copy-dropped"
		if onStart != nil {
			onStart(name)
		}
		rep, err := p.Check(ctx, cfg, one)
		if err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return ks, ctx.Err()
		}
		k := Kill{Spec: name, Protocol: p.Name, Mutation: cfg.Fault.String(), Expected: want, Checked: []string{want}}
		if rep.Verdict == explore.Violated {
			k.Failing, k.Killed = []string{rep.Violation.Property}, rep.Violation.Property == want
		}
		ks = append(ks, k)
		if onRow != nil {
			onRow(k)
		}
	}
	return ks, nil
}

// Mutated counts the outcomes of mutated specs: the rows KillMatrix makes.
func Mutated(out []Outcome) int {
	n := 0
	for _, o := range out {
		if o.Spec.Mutation != "" {
			n++
		}
	}
	return n
}

// MatrixMarkdown renders the kill matrix: one row per mutated spec, one
// column per invariant; ✗ = fails (kills), · = holds, blank = not checked.
func MatrixMarkdown(ks []Kill) string {
	var cols []string
	seen := map[string]bool{}
	for _, k := range ks {
		for _, c := range k.Checked {
			if !seen[c] {
				seen[c] = true
				cols = append(cols, c)
			}
		}
	}
	var b strings.Builder
	b.WriteString("Kill matrix: ✗ = the invariant fails when checked alone, · = it holds, blank = not checked.\n\n")
	b.WriteString("| spec | mutation | expected | killed |")
	for _, c := range cols {
		b.WriteString(" " + c + " |")
	}
	b.WriteString("\n|---|---|---|---|" + strings.Repeat("---|", len(cols)) + "\n")
	for _, k := range ks {
		killed := "yes"
		if !k.Killed {
			killed = "**no**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |", k.Spec, k.Mutation, k.Expected, killed)
		for _, c := range cols {
			cell := " "
			if contains(k.Checked, c) {
				cell = "·"
			}
			if contains(k.Failing, c) {
				cell = "✗"
			}
			b.WriteString(" " + cell + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
