package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cutcheck/cutcheck/cli/internal/picture"
	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/protocols"
)

// classRank orders consequence classes worst first (invariants.Classes);
// a class the list does not know comes after them.
func classRank(c string) int {
	for i, k := range invariants.Classes {
		if string(k.Class) == c {
			return i
		}
	}
	return len(invariants.Classes)
}

// worstFirst orders a run's violations by class, worst first, and by
// trace length within a class (a stable sort keeps the model's order).
func worstFirst(vs []*explore.TraceReport) {
	slices.SortStableFunc(vs, func(a, b *explore.TraceReport) int {
		if d := classRank(a.Class) - classRank(b.Class); d != 0 {
			return d
		}
		return len(a.Steps) - len(b.Steps)
	})
}

// consequences renders --all's table: every always and transition
// property, worst class first, with its status.
func consequences(rep explore.Report, props []protocols.Prop) string {
	var ps []protocols.Prop
	for _, q := range props {
		if q.Kind != explore.Sometimes {
			ps = append(ps, q)
		}
	}
	slices.SortStableFunc(ps, func(a, b protocols.Prop) int { return classRank(a.Class) - classRank(b.Class) })
	w := 0
	for _, q := range ps {
		w = max(w, len(q.Name))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "consequences (worst first):\n")
	for _, q := range ps {
		status := "holds"
		switch i := slices.IndexFunc(rep.Violations, func(t *explore.TraceReport) bool { return t.Property == q.Name }); {
		case i >= 0:
			status = fmt.Sprintf("VIOLATED in %d steps", len(rep.Violations[i].Steps)-1)
		case slices.Contains(rep.Unchecked, q.Name):
			status = "not checked"
		case rep.Unfinished:
			status = "undecided (the search stopped early)"
		}
		fmt.Fprintf(&b, "  %-*s  %-9s  %s\n", w, q.Name, q.Class, status)
	}
	for _, t := range rep.Violations {
		if t.Property == "deadlock" {
			fmt.Fprintf(&b, "  %-*s  %-9s  VIOLATED in %d steps\n", w, t.Property, "", len(t.Steps)-1)
		}
	}
	return b.String()
}

// printAll prints --all's table and every counterexample, worst first.
func printAll(stdout io.Writer, rep explore.Report, props []protocols.Prop, full bool) {
	fmt.Fprintf(stdout, "\n%s", consequences(rep, props))
	for _, t := range rep.Violations {
		fmt.Fprintf(stdout, "\nCounterexample for %s (%d steps):\n%s", t.Property, len(t.Steps)-1, t.Text(full))
	}
}

// uncheckedHint says how to check what a plain run left out.
func uncheckedHint(stdout io.Writer, rep explore.Report) {
	if len(rep.Unchecked) > 0 && len(rep.Violations) == 0 {
		fmt.Fprintf(stdout, "  (not checked: %s; check them with --with, or every property with --all)\n", strings.Join(rep.Unchecked, ", "))
	}
}

// allHTML draws the worst violation above the table of all of them.
func allHTML(w io.Writer, title string, rep explore.Report) error {
	return picture.WriteHTMLAll(w, title, rep.Violations)
}
