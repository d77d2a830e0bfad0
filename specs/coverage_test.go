package specs

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/protocols"
)

// An option is one thing a positive spec may turn on; a pair of options a
// protocol (in one mode) declares must meet in at least one positive spec,
// so that a mistake that shows only when two of them combine (a
// transaction resent whole after a reconnect under exactly-once delivery,
// a whole-server filter by a transaction's first row) has a run that fails.
type option struct {
	name     string
	declared func(p *protocols.Protocol) bool
	on       func(s Spec, cfg protocols.Config) bool
}

func options(p *protocols.Protocol) []option {
	opts := []option{
		{"initial any", func(*protocols.Protocol) bool { return true }, func(_ Spec, c protocols.Config) bool { return c.InitialAny }},
		{"noops", func(*protocols.Protocol) bool { return true }, func(_ Spec, c protocols.Config) bool { return c.NoOps }},
		{"history", func(*protocols.Protocol) bool { return true }, func(s Spec, _ protocols.Config) bool { return len(s.History) > 0 }},
		{"whole-server", func(p *protocols.Protocol) bool { return p.Limits.WholeServer }, func(_ Spec, c protocols.Config) bool { return c.WholeServer }},
		{"txn ≥ 2", func(p *protocols.Protocol) bool { return p.Limits.Txn >= 2 }, func(_ Spec, c protocols.Config) bool { return c.Txn >= 2 }},
		{"chunks ≥ 2", func(p *protocols.Protocol) bool { return p.Limits.Chunks >= 2 }, func(_ Spec, c protocols.Config) bool { return c.Chunks >= 2 }},
		{"sink rule", func(*protocols.Protocol) bool { return true }, func(_ Spec, c protocols.Config) bool { return !c.Sink.IsLastWriterWins() }},
	}
	cfg := p.Defaults
	for _, pr := range p.Properties(cfg) {
		if pr.OptIn {
			name := pr.Name
			opts = append(opts, option{name, func(*protocols.Protocol) bool { return true }, func(s Spec, _ protocols.Config) bool {
				return slices.Contains(s.With, name) || slices.Contains(s.Only, name)
			}})
		}
	}
	return opts
}

// shipped is the protocols registered before any test runs: the shipped
// ones and the open disciplines, not a variant a test registers.
var shipped = protocols.All()

// missingPairs lists, for every shipped protocol and mode, the pairs of its
// declared options no positive spec turns on together.
func missingPairs(t *testing.T, all []Spec) []string {
	var missing []string
	for _, p := range shipped {
		modes := p.Limits.Modes
		if len(modes) == 0 {
			modes = []string{""}
		}
		for _, mode := range modes {
			var opts []option
			for _, o := range options(p) {
				if o.declared(p) {
					opts = append(opts, o)
				}
			}
			name := p.Name
			if mode != "" {
				name += " (" + mode + ")"
			}
			met := map[[2]int]bool{}
			specs, positive := 0, 0
			for _, s := range all {
				cfg, q, err := s.Config()
				if err != nil {
					t.Fatalf("%s: %v", s.Name, err)
				}
				if q.Name != p.Name || cfg.Mode != mode {
					continue
				}
				if specs++; s.Mutation != "" || s.Expect != "pass" {
					continue
				}
				positive++
				for i := range opts {
					for j := i + 1; j < len(opts); j++ {
						if opts[i].on(s, cfg) && opts[j].on(s, cfg) {
							met[[2]int{i, j}] = true
						}
					}
				}
			}
			switch {
			case specs == 0:
				missing = append(missing, name+": no spec at all")
				continue
			case positive == 0:
				// a mode published as broken (an open discipline's
				// rejected reading): its failing spec shows how
				continue
			}
			for i := range opts {
				for j := i + 1; j < len(opts); j++ {
					if !met[[2]int{i, j}] {
						missing = append(missing, fmt.Sprintf("%s: %s with %s", name, opts[i].name, opts[j].name))
					}
				}
			}
		}
	}
	return missing
}

// Every pair of a protocol's options meets in a positive spec.
func TestOptionPairsCovered(t *testing.T) {
	all, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if m := missingPairs(t, all); len(m) > 0 {
		t.Errorf("%d pairs of options no positive spec combines:\n%s", len(m), strings.Join(m, "\n"))
	}
}

// The check fails on a removed spec, naming the pairs only it combined:
// without pairs-sink-parallel (and its copies at other coordinate bases)
// the sink rule meets nothing of parallel's; without pairs-parallel too,
// no two of its options meet.
func TestOptionPairsMissing(t *testing.T) {
	all, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	without := func(names ...string) string {
		var rest []Spec
		for _, s := range all {
			if !slices.Contains(names, s.Name) {
				rest = append(rest, s)
			}
		}
		return strings.Join(missingPairs(t, rest), "\n")
	}
	m := without("pairs-sink-parallel", "coord-8-parallel", "coord-254-parallel")
	if !strings.Contains(m, "parallel: noops with sink rule") || !strings.Contains(m, "parallel: sink rule with no-duplicate-delivery") ||
		strings.Contains(m, "parallel: noops with whole-server") || strings.Contains(m, "classic:") {
		t.Errorf("without pairs-sink-parallel, missing:\n%s", m)
	}
	m = without("pairs-sink-parallel", "coord-8-parallel", "coord-254-parallel", "pairs-parallel")
	if !strings.Contains(m, "parallel: noops with whole-server") || !strings.Contains(m, "parallel: history with no-duplicate-delivery") || strings.Contains(m, "classic:") {
		t.Errorf("without pairs-parallel and pairs-sink-parallel, missing:\n%s", m)
	}
}
