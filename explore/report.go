package explore

import (
	"fmt"
	"strings"
	"time"
)

// Report is a Result with its trace rendered, independent of S and A: what
// the command line prints and saves. Its JSON form is listed in the package
// documentation.
type Report struct {
	Verdict     Verdict       `json:"-"`
	VerdictName string        `json:"verdict"` // Verdict.String()
	Stats       Stats         `json:"stats"`
	Coverage    []ActionCount `json:"coverage"`
	Sometimes   []Reach       `json:"sometimes"`
	Collision   float64       `json:"collision"`
	Violation   *TraceReport  `json:"violation,omitempty"`
	// Violations: with Options.Continue, each failing property's shortest
	// counterexample (Result.Violations).
	Violations []*TraceReport `json:"violations,omitempty"`
	// Unchecked: the Always and Transition properties not checked.
	Unchecked []string `json:"unchecked,omitempty"`
	// Unfinished: a run with Continue stopped early, so a property
	// without a violation is undecided.
	Unfinished bool         `json:"unfinished,omitempty"`
	Levels     []ShardLevel `json:"levels,omitempty"`      // a shard's run only
	ShardSplit *ShardSplit  `json:"shard_split,omitempty"` // a shard's run only
	Simulation *SimStats    `json:"simulation,omitempty"`  // a simulation only
	Identity   Identity     `json:"identity,omitempty"`    // the search's, when the caller sets it
}

// TraceReport is a violation with its trace rendered step by step.
type TraceReport struct {
	Property string      `json:"property"`
	Cite     string      `json:"cite"`
	Kind     string      `json:"kind"`
	Class    string      `json:"class,omitempty"` // Property.Class
	Reason   string      `json:"reason"`
	Steps    []TraceStep `json:"steps"`
	Path     []int       `json:"path,omitempty"` // Violation.Path
}

// TraceStep is one state of a trace and the action that led to it.
type TraceStep struct {
	Action string  `json:"action"`           // Describe(previous state, action); "" for the initial state
	Fields []Field `json:"fields,omitempty"` // if the model is a Fielder
	View   any     `json:"view,omitempty"`   // if the model is a Viewer
}

// NewReport renders r with m's descriptions, fields and views.
func NewReport[S, A any](m Machine[S, A], r *Result[S, A]) Report {
	rep := Report{
		Verdict:     r.Verdict,
		VerdictName: r.Verdict.String(),
		Stats:       r.Stats,
		Coverage:    r.Coverage,
		Sometimes:   r.Sometimes,
		Collision:   r.Collision,
		Levels:      r.Levels,
		ShardSplit:  r.ShardSplit,
		Simulation:  r.Simulation,
	}
	rep.Unchecked, rep.Unfinished = r.Unchecked, r.Unfinished
	if v := r.Violation; v != nil {
		rep.Violation = traceReport(m, v)
	}
	for _, v := range r.Violations {
		rep.Violations = append(rep.Violations, traceReport(m, v))
	}
	return rep
}

// traceReport renders one violation's trace.
func traceReport[S, A any](m Machine[S, A], v *Violation[S, A]) *TraceReport {
	tr := &TraceReport{Property: v.Property, Cite: v.Cite, Kind: v.Kind.String(), Class: v.Class, Reason: v.Reason, Path: v.Path}
	describe := describer(m)
	fielder, _ := part[Fielder[S]](m)
	viewer, _ := part[Viewer[S]](m)
	for i, st := range v.Trace {
		var ts TraceStep
		if i > 0 && st.HasAction {
			ts.Action = describe.Describe(&v.Trace[i-1].State, st.Action)
		}
		if fielder != nil {
			ts.Fields = fielder.Fields(&v.Trace[i].State)
		}
		if viewer != nil {
			ts.View = viewer.View(&v.Trace[i].State)
		}
		tr.Steps = append(tr.Steps, ts)
	}
	return tr
}

// Text renders the trace: one block per step, "step N: action" followed by
// the fields that changed since the previous step (all of them for step 0,
// or for every step when full is set), then a block naming the property.
//
//	step 0: initial state
//	  small: 0
//	  big: 0
//	step 1: fill big
//	  big: 0 → 5
//	...
//	violated: big-not-4 (always, Die Hard 3)
//	  big jug holds 4 gallons
func (t *TraceReport) Text(full bool) string {
	var b strings.Builder
	var prev []Field
	for i, st := range t.Steps {
		action := st.Action
		if i == 0 && action == "" {
			action = "initial state"
		}
		fmt.Fprintf(&b, "step %d: %s\n", i, action)
		old := make(map[string]string, len(prev))
		for _, f := range prev {
			old[f.Name] = f.Value
		}
		for _, f := range st.Fields {
			was, had := old[f.Name]
			switch {
			case i == 0 || !had:
				fmt.Fprintf(&b, "  %s: %s\n", f.Name, f.Value)
			case was != f.Value:
				fmt.Fprintf(&b, "  %s: %s → %s\n", f.Name, was, f.Value)
			case full:
				fmt.Fprintf(&b, "  %s: %s\n", f.Name, f.Value)
			}
		}
		prev = st.Fields
	}
	fmt.Fprintf(&b, "violated: %s (%s", t.Property, t.Kind)
	if t.Class != "" {
		fmt.Fprintf(&b, ", %s", t.Class)
	}
	if t.Cite != "" {
		fmt.Fprintf(&b, ", %s", t.Cite)
	}
	fmt.Fprintf(&b, ")\n  %s\n", t.Reason)
	return b.String()
}

// Summary renders the verdict and statistics, one item per line.
func (r Report) Summary() string {
	var b strings.Builder
	s := r.Stats
	if r.Simulation != nil {
		r.simSummary(&b)
		return b.String()
	}
	fmt.Fprintf(&b, "verdict:     %s\n", r.Verdict)
	fmt.Fprintf(&b, "initial:     %d\n", s.Initial)
	fmt.Fprintf(&b, "generated:   %d\n", s.Generated)
	fmt.Fprintf(&b, "distinct:    %d\n", s.Distinct)
	fmt.Fprintf(&b, "depth:       %d\n", s.Depth)
	fmt.Fprintf(&b, "as TLC:      %d generated, %d distinct, depth %d\n", s.TLCGenerated, s.Distinct, s.TLCDepth)
	if s.Symmetry {
		fmt.Fprintf(&b, "symmetry:    on (states counted up to the model's symmetry)\n")
	}
	fmt.Fprintf(&b, "queue peak:  %d\n", s.QueuePeak)
	fmt.Fprintf(&b, "states/s:    %.0f\n", s.Rate())
	fmt.Fprintf(&b, "elapsed:     %s\n", s.Elapsed.Round(time.Millisecond))
	if s.BytesPerState > 0 {
		fmt.Fprintf(&b, "memory:      %s at the peak, %.0f bytes per distinct state (all the process held)\n", byteSize(s.MemPeak), s.BytesPerState)
	}
	switch {
	case s.Graded && s.OnDisk:
		fmt.Fprintf(&b, "seen-set:    none (graded model); disk tier in use\n")
	case s.Graded:
		fmt.Fprintf(&b, "seen-set:    none (graded model: no state recurs across levels)\n")
	case s.OnDisk:
		fmt.Fprintf(&b, "seen-set:    on disk\n")
	}
	fmt.Fprintf(&b, "collision:   %.2g\n", r.Collision)
	if len(r.Unchecked) > 0 {
		fmt.Fprintf(&b, "unchecked:   %s\n", strings.Join(r.Unchecked, ", "))
	}
	r.coverageSometimes(&b)
	return b.String()
}

// coverageSometimes renders the coverage and Sometimes parts of Summary.
func (r Report) coverageSometimes(b *strings.Builder) {
	if len(r.Coverage) > 0 {
		fmt.Fprintf(b, "coverage:\n")
		w := 0
		for _, c := range r.Coverage {
			w = max(w, len(c.Name))
		}
		for _, c := range r.Coverage {
			if c.Count == 0 {
				fmt.Fprintf(b, "  %-*s  never enabled\n", w, c.Name)
			} else {
				fmt.Fprintf(b, "  %-*s  %d\n", w, c.Name, c.Count)
			}
		}
	}
	if len(r.Sometimes) > 0 {
		fmt.Fprintf(b, "sometimes:\n")
		for _, p := range r.Sometimes {
			cite := ""
			if p.Cite != "" {
				cite = " (" + p.Cite + ")"
			}
			if p.Reached {
				fmt.Fprintf(b, "  %s%s: reached at depth %d\n", p.Name, cite, p.Depth)
			} else {
				fmt.Fprintf(b, "  %s%s: unreached\n", p.Name, cite)
			}
		}
	}
}
