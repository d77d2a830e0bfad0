// Package protocols holds the capture protocols of the Generalized DBLog paper
// (§7) as state machines the explorer can check: one file per protocol, each
// reading like the paper's description of it.
//
// Every protocol lets the source commit transactions (atomically, 1..T row
// events on distinct keys, each changing its key) at any point, interleaved
// with every capture step, until E row events exist. Every state embeds a
// model.Capture: the log, the plan recorded so far, the latent read
// positions, the consumer's position and the replay of what was emitted.
package protocols

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
)

// Config holds the bounds of a run and the fault, if any, to inject.
type Config struct {
	Keys   int    // K: keys 0..K-1
	Values int    // V: values 1..V
	Events int    // E: row events the source commits at most
	Chunks int    // C: units (chunks)
	Txn    int    // T: row events per transaction at most
	Mode   string // protocol-specific mode (dump: "trusted" or "uncertain")
	// Initial is the store before the history starts (§2.1): rows that only a
	// chunk read can supply. Empty by default, as in the paper's bounded runs.
	Initial model.Store
	// InitialAny explores every base store over the keys and values as an
	// initial state (Initial must then be empty).
	InitialAny bool
	// NoOps lets the source also commit no-op writes: an UPDATE to the
	// key's current value and a DELETE of an absent key. PostgreSQL logs
	// both to logical decoding and §2.1 does not exclude them; they are an
	// option because they about double the states.
	NoOps bool
	// History, when not empty, fixes the first transactions the source
	// commits, in order (source.go, Commits): the paper's L, or an
	// incident's. Its Init is unused.
	History model.Log
	// Onset, with early-common-onset, fixes the claimed onset to c* =
	// Onset-1, claimed once the run is complete (0 = any c* below the
	// frontier, whenever every unit has closed): Prop 2's ∀ c* ⊏ f.
	Onset uint8
	// WholeServer makes the log the whole server's (§7.7): the source may
	// also write key K, one key outside the captured scope that no unit
	// owns, and every capture must skip its events.
	WholeServer bool
	// Sink is the merge rule at the sink (model.SinkRule; nil is
	// last-writer-wins, the replay of §6, Def. 6.1): a one-line choice on
	// any protocol, e.g. p.Defaults.Sink = model.VersionMax (sink.go).
	Sink *model.SinkRule
	// ExactEmission makes every capture keep a digest of its stream
	// (model.Capture.Digesting) for the exact-emission check, and adds
	// its emission-judged sometimes-property. Check sets it when the
	// check runs (--with, a spec's with, --all); a run without it has the
	// states it always had.
	ExactEmission bool
	// CoordBase is the log's first position (0 is 1, the default): the
	// positions a sink rule compares and traces show start there, so a run
	// can cross 9 → 10 and 255 → 256 (coord.go). The states, and so the
	// counts, are those of base 1.
	CoordBase int
	Fault     Fault // a mutation of the protocol or of its claim; None = the protocol as published
}

func (c Config) String() string {
	s := fmt.Sprintf("keys=%d values=%d events=%d chunks=%d txn=%d", c.Keys, c.Values, c.Events, c.Chunks, c.Txn)
	if c.Mode != "" {
		s += " mode=" + c.Mode
	}
	switch {
	case c.InitialAny:
		s += " initial=any"
	case c.Initial != (model.Store{}):
		s += " initial=" + StoreString(c.Initial, c.Keys)
	}
	if c.NoOps {
		s += " noops"
	}
	if c.History.N > 0 {
		s += " history=" + HistoryString(&c.History)
	}
	if c.Onset > 0 {
		s += fmt.Sprintf(" onset=%d", c.Onset-1)
	}
	if c.WholeServer {
		s += " whole-server"
	}
	if !c.Sink.IsLastWriterWins() {
		s += " sink=" + c.Sink.Name
	}
	if c.CoordBase > 1 {
		s += fmt.Sprintf(" coord-base=%d", c.CoordBase)
	}
	if c.Fault != None {
		s += " fault=" + c.Fault.String()
	}
	return s
}

// Limits are the largest bounds a protocol accepts.
type Limits struct {
	Keys, Values, Events, Chunks, Txn int
	Modes                             []string // accepted modes; empty = no modes
	WholeServer                       bool     // every consume path skips events outside the scope (Config.WholeServer)
}

// Prop describes one property for listings.
type Prop struct {
	Name, Cite string
	Kind       explore.Kind
	Class      string // what a failure costs (invariants.Class); "" for sometimes-properties
	OptIn      bool   // checked only when asked for (--with)
}

// Protocol is one registered protocol model.
type Protocol struct {
	Name     string
	Doc      string // one line
	Cite     string
	Defaults Config
	Limits   Limits
	Faults   []Fault // the faults this protocol implements
	// Version is what the author declares of the model's version: change
	// it with the model (its parts), so that checkpoints and shard results
	// of the old one are refused by name, not only by the build.
	Version string
	// Properties lists the properties the model checks under cfg.
	Properties func(cfg Config) []Prop
	// Check explores the model under cfg.
	Check func(ctx context.Context, cfg Config, opts explore.Options) (explore.Report, error)
	// Disciplines maps a mode ("" for a protocol without modes) to the
	// emission discipline (§6) its runs are certified under: WindowDiscard,
	// RangeMerge or PointSplice. A mode it leaves out has no evidence-bundle
	// form (check --bundle); so has every mode of a model whose state holds
	// no model.Capture.
	Disciplines map[string]string
	capture     bool // the model's state holds a model.Capture (set by Define)
	// valueSeeing names a part that receives values and is not declared
	// value-blind: the model's value renaming is then refused (symmetry.go).
	valueSeeing string

	extend func(q *Protocol, ext Extension) error // Extend's hook, set by Define
	with   []string                               // opt-in properties checked by default (Extension.With)
}

// Replaces refuses a mutation's fault f on a protocol whose Defaults carry
// another fault: a design expressed as a fault (a variant's choice), which
// the mutation would silently replace.
func (p *Protocol) Replaces(f Fault) error {
	if d := p.Defaults.Fault; d != None && d != f {
		return fmt.Errorf("%s is built with the fault %s (its defaults), which the mutation would replace", p.Name, d)
	}
	return nil
}

// The emission disciplines (§6.2–§6.4), named as certify names them.
const (
	WindowDiscard = "window-discard"
	RangeMerge    = "range-merge"
	PointSplice   = "point-splice"
)

// Discipline returns the discipline the runs of p in mode are certified
// under, or an error saying why they have no evidence-bundle form.
func (p *Protocol) Discipline(mode string) (string, error) {
	switch d, ok := p.Disciplines[mode]; {
	case len(p.Disciplines) == 0:
		return "", fmt.Errorf("%s declares no emission discipline (Protocol.Disciplines), so its runs have no evidence-bundle form", p.Name)
	case !p.capture:
		return "", fmt.Errorf("%s's state holds no model.Capture, so its runs have no evidence-bundle form", p.Name)
	case !ok:
		return "", fmt.Errorf("%s declares no emission discipline for mode %q, so those runs have no evidence-bundle form", p.Name, mode)
	case d != WindowDiscard && d != RangeMerge && d != PointSplice:
		return "", fmt.Errorf("%s declares the discipline %q for mode %q, not one of %s, %s, %s", p.Name, d, mode, WindowDiscard, RangeMerge, PointSplice)
	default:
		return d, nil
	}
}

var registry []*Protocol

// Register adds a protocol to those every command knows (check, run,
// reproduce, list), as a user's main does before calling cli.Main. Build p
// with Define, or take a shipped one (e.g. Parallel) and change its parts.
// It refuses, with an error naming the protocol, a bad name (empty, or
// with a space or slash), a name already taken, and a protocol without
// Check and Properties.
func Register(p *Protocol) error {
	switch {
	case p.Name == "" || strings.ContainsAny(p.Name, " \t/"):
		return fmt.Errorf("protocols.Register: bad protocol name %q", p.Name)
	case lookup(p.Name) != nil:
		return fmt.Errorf("protocols.Register: protocol %q is already registered", p.Name)
	case p.Check == nil || p.Properties == nil:
		return fmt.Errorf("protocols.Register: protocol %q has no model (build it with Define)", p.Name)
	}
	registry = append(registry, p)
	return nil
}

// mustRegister registers a shipped protocol, which cannot be refused.
func mustRegister(p *Protocol) {
	if err := Register(p); err != nil {
		panic(err)
	}
}

// order is the order the shipped protocols are listed in, as in §7.
var order = []string{"classic", "readonly", "parallel", "dump", "composite"}

// All returns the registered protocols: the shipped ones in the paper's
// order, then the others in the order they were registered.
func All() []*Protocol {
	out := make([]*Protocol, 0, len(registry))
	for _, name := range order {
		if p := lookup(name); p != nil {
			out = append(out, p)
		}
	}
	for _, p := range registry {
		if !slices.Contains(order, p.Name) {
			out = append(out, p)
		}
	}
	return out
}

func lookup(name string) *Protocol {
	for _, p := range registry {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Lookup finds a protocol by name; the error lists the valid names.
func Lookup(name string) (*Protocol, error) {
	if p := lookup(name); p != nil {
		return p, nil
	}
	var names []string
	for _, p := range All() {
		names = append(names, p.Name)
	}
	return nil, fmt.Errorf("unknown protocol %q (known: %s)", name, strings.Join(names, ", "))
}

// ConfigError is a bound, mode or fault a protocol does not accept.
type ConfigError struct {
	Protocol, Field, Problem string
}

func (e *ConfigError) Error() string { return e.Protocol + ": " + e.Field + ": " + e.Problem }

// Validate checks cfg against the protocol's limits and faults.
func (p *Protocol) Validate(cfg Config) error {
	bad := func(field, format string, a ...any) error {
		return &ConfigError{p.Name, field, fmt.Sprintf(format, a...)}
	}
	l := p.Limits
	for _, b := range []struct {
		name    string
		v, hi   int
		minimum int
	}{
		{"keys", cfg.Keys, l.Keys, 1},
		{"values", cfg.Values, l.Values, 1},
		{"events", cfg.Events, l.Events, 0},
		{"chunks", cfg.Chunks, l.Chunks, 1},
		{"txn", cfg.Txn, l.Txn, 1},
	} {
		if b.v < b.minimum || b.v > b.hi {
			return bad(b.name, "%d is out of range %d..%d", b.v, b.minimum, b.hi)
		}
	}
	if cfg.InitialAny && cfg.Initial != (model.Store{}) {
		return bad("initial", "either any or one store, not both")
	}
	for k, v := range cfg.Initial {
		if k >= cfg.Keys && v != model.Absent || int(v) > cfg.Values {
			return bad("initial", "key k%d = %d is outside keys 0..%d, values 0..%d", k, v, cfg.Keys-1, cfg.Values)
		}
	}
	if cfg.Chunks > cfg.Keys {
		return bad("chunks", "%d exceeds keys = %d (every unit owns at least one key)", cfg.Chunks, cfg.Keys)
	}
	if cfg.Mode == "whole-server" { // parallel's mode before the option was every protocol's
		return bad("mode", "whole-server is not a mode: give whole-server (--whole-server, spec field whole-server)")
	}
	if len(l.Modes) == 0 && cfg.Mode != "" {
		return bad("mode", "this protocol has no modes (got %q)", cfg.Mode)
	}
	if len(l.Modes) > 0 && !slices.Contains(l.Modes, cfg.Mode) {
		return bad("mode", "%q is not one of %s", cfg.Mode, strings.Join(l.Modes, ", "))
	}
	if cfg.WholeServer && !l.WholeServer {
		return bad("whole-server", "this protocol's capture does not model a log beyond its scope")
	}
	if cfg.WholeServer && cfg.Keys >= model.MaxKeys {
		return bad("keys", "%d leaves no key outside the scope for whole-server (at most %d)", cfg.Keys, model.MaxKeys-1)
	}
	if cfg.CoordBase < 0 || cfg.CoordBase > MaxCoordBase {
		return bad("coord-base", "%d is out of range 1..%d (the log's first position)", cfg.CoordBase, MaxCoordBase)
	}
	if cfg.Fault != None && !slices.Contains(p.Faults, cfg.Fault) {
		return bad("mutation", "%s does not apply to this protocol", cfg.Fault)
	}
	if problem := cfg.historyProblem(); problem != "" {
		return bad("history", "%s", problem)
	}
	if cfg.Onset > 0 && cfg.Fault != EarlyCommonOnset {
		return bad("onset", "fixes the onset early-common-onset claims; give that mutation too")
	}
	if cfg.Onset > 0 && int(cfg.Onset) > cfg.Events {
		return bad("onset", "c* = %d is not below any frontier of a run of events = %d", cfg.Onset-1, cfg.Events)
	}
	// The first state may commit Σ_t P(K,t)·V^t transactions (Commits).
	commits, perm := 0, 1
	for t := 1; t <= min(cfg.Txn, cfg.Events, MaxTxn); t++ {
		perm *= (cfg.sourceKeys() - t + 1) * cfg.Values
		commits += perm
	}
	if commits > explore.MaxActions {
		return bad("txn", "keys=%d values=%d txn=%d give a state %d transactions to choose from, more than the %d actions a state the checker supports; lower txn, values or keys", cfg.Keys, cfg.Values, cfg.Txn, commits, explore.MaxActions)
	}
	return nil
}

// Define gives p its Check and Properties from a model constructor, and
// returns p: the one step between an explore.Model and a Protocol every
// command can run. Check validates cfg against p.Limits and p.Faults first.
func Define[S, A any](p *Protocol, build func(cfg Config) explore.Model[S, A]) *Protocol {
	return defineMachine(p, func(cfg Config) explore.Machine[S, A] { return build(cfg) })
}

// defineMachine is Define for any explore.Machine (Extend's models).
func defineMachine[S, A any](p *Protocol, build func(cfg Config) explore.Machine[S, A]) *Protocol {
	p.Check = func(ctx context.Context, cfg Config, opts explore.Options) (explore.Report, error) {
		if err := p.Validate(cfg); err != nil {
			return explore.Report{}, err
		}
		if opts.Symmetry && p.valueSeeing != "" {
			return explore.Report{}, &SymmetryError{p.Name, p.valueSeeing}
		}
		if opts.Symmetry && cfg.History.N > 0 {
			return explore.Report{}, ErrHistorySymmetry
		}
		if opts.Symmetry && !cfg.Sink.IsLastWriterWins() && !cfg.Sink.ValueBlind {
			return explore.Report{}, &SymmetryError{p.Name, "Sink (rule " + cfg.Sink.Name + ")"}
		}
		if len(opts.Only) == 0 && len(p.with) > 0 {
			opts.With = append(slices.Clip(opts.With), p.with...)
		}
		// Continue (--all) checks every property, the opt-in ones too.
		if name := invariants.ExactEmission.Name; slices.Contains(opts.With, name) || slices.Contains(opts.Only, name) || opts.Continue && len(opts.Only) == 0 {
			// only for a model that declares it: another's states stay as they were
			cfg.ExactEmission = slices.ContainsFunc(build(cfg).Properties(), func(q explore.Property[S, A]) bool { return q.Name == name })
		}
		if cfg.ExactEmission && (opts.Symmetry || opts.CheckSymmetry) {
			return explore.Report{}, ErrEmissionSymmetry
		}
		m := build(cfg)
		if err := checkSink(m, cfg.Sink); err != nil {
			return explore.Report{}, fmt.Errorf("%s: %w", p.Name, err)
		}
		if err := checkShift(m, cfg.shift()); err != nil {
			return explore.Report{}, fmt.Errorf("%s: %w", p.Name, err)
		}
		r, err := explore.Run(ctx, m, opts)
		if err != nil {
			return explore.Report{}, err
		}
		rep := explore.NewReport(m, r)
		fillFromCapture(&rep, r, cfg.Keys)
		return rep, nil
	}
	p.Properties = func(cfg Config) []Prop {
		var out []Prop
		for _, q := range build(cfg).Properties() {
			out = append(out, Prop{q.Name, q.Cite, q.Kind, q.Class, q.OptIn})
		}
		return out
	}
	p.extend = extender(build)
	_, err := model.CaptureOf[S]()
	p.capture = err == nil
	return p
}
