package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/mutations"
	"github.com/cutcheck/cutcheck/protocols"
)

func runList(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		return usageErr(stderr, "list", "takes no arguments, got %q", strings.Join(args, " "))
	}
	fmt.Fprintln(stdout, "Protocols:")
	if len(protocols.All()) == 0 {
		fmt.Fprintln(stdout, "  (none registered)")
	}
	for _, p := range protocols.All() {
		fmt.Fprintf(stdout, "  %-10s %s [%s]\n", p.Name, p.Doc, p.Cite)
		fmt.Fprintf(stdout, "             defaults: %s\n", p.Defaults)
		if len(p.Limits.Modes) > 0 {
			fmt.Fprintf(stdout, "             modes:    %s (--mode, or \"mode\" in a spec)\n", strings.Join(p.Limits.Modes, ", "))
		}
		var always, sometimes []string
		for _, q := range p.Properties(p.Defaults) {
			name := q.Name
			if q.Class != "" {
				name += " [" + q.Class + "]"
			}
			switch {
			case q.Kind == explore.Sometimes:
				sometimes = append(sometimes, q.Name)
			case q.OptIn:
				always = append(always, name+" (opt-in)")
			default:
				always = append(always, name)
			}
		}
		fmt.Fprintf(stdout, "             invariants: %s\n", strings.Join(always, ", "))
		fmt.Fprintf(stdout, "             sometimes:  %s\n", strings.Join(sometimes, ", "))
	}
	fmt.Fprintln(stdout, "\nInvariants (name, kind, what a failure costs, [theorem]):")
	for _, inv := range invariants.All {
		fmt.Fprintf(stdout, "  %-26s %-10s %-9s [%s] %s\n", inv.Name, inv.Kind, inv.Class, inv.Cite, inv.Doc)
	}
	// The invariants a protocol defines for itself (e.g. an open discipline's
	// obligation), once each.
	shared := map[string]bool{}
	for _, inv := range invariants.All {
		shared[inv.Name] = true
	}
	var own []string
	for _, p := range protocols.All() {
		for _, q := range p.Properties(p.Defaults) {
			if q.Kind == explore.Sometimes || shared[q.Name] {
				continue
			}
			shared[q.Name] = true
			own = append(own, fmt.Sprintf("  %-26s %-10s %-9s [%s] (%s)", q.Name, q.Kind, q.Class, q.Cite, p.Name))
		}
	}
	if len(own) > 0 {
		fmt.Fprintln(stdout, "\nInvariants of one protocol (name, kind, what a failure costs, [cite], protocol):")
		fmt.Fprintln(stdout, strings.Join(own, "\n"))
	}
	fmt.Fprintln(stdout, "\nWhat a failure costs:")
	for _, c := range invariants.Classes {
		fmt.Fprintf(stdout, "  %-9s %s\n", c.Class, c.Doc)
	}
	var sinks []string
	for _, r := range model.SinkRules {
		sinks = append(sinks, r.Name)
	}
	fmt.Fprintf(stdout, "\nSink rules (--sink, or \"sink\" in a spec; the first is the default, the replay of §6):\n  %s\n", strings.Join(sinks, ", "))
	fmt.Fprintln(stdout, "\nMutations (protocols → invariant that must fail):")
	for _, m := range mutations.All {
		mode := ""
		if m.Mode != "" {
			mode = " --mode " + m.Mode
		}
		fmt.Fprintf(stdout, "  %-25s %s%s → %s [%s]\n      %s\n", m.Name(), strings.Join(m.Protocols, ","), mode, m.Breaks, m.Cite, m.Doc)
	}
	return exitOK
}
