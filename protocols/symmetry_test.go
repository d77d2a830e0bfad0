package protocols

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

// symModel is what these tests need of a protocol model: the engine's
// contract and its symmetry.
type symModel[S comparable, A any] interface {
	explore.Model[S, A]
	explore.Symmetric[S]
}

// symCase is one protocol model with a renaming of its states written out
// field by field (not through its Canonical).
type symCase[S comparable, A any] struct {
	m      symModel[S, A]
	rename func(s S, r *model.Renaming) S
}

func capRename[S any](cap func(*S) *model.Capture) func(S, *model.Renaming) S {
	return func(s S, r *model.Renaming) S {
		cap(&s).RenameValues(r)
		return s
	}
}

var (
	classicRename   = capRename(func(s *classicState) *model.Capture { return &s.Cap })
	parallelRename  = capRename(func(s *parallelState) *model.Capture { return &s.Cap })
	dumpRename      = capRename(func(s *dumpState) *model.Capture { return &s.Cap })
	compositeRename = capRename(func(s *compositeState) *model.Capture { return &s.Cap })
)

func readonlyRename(s readonlyState, r *model.Renaming) readonlyState {
	s.Cap.RenameValues(r)
	for i := range s.Pending.Ev {
		s.Pending.Ev[i].Img = r[s.Pending.Ev[i].Img]
	}
	return s
}

// renamings returns every permutation of the values 1..v.
func renamings(v int) []model.Renaming {
	vals := make([]model.Value, v)
	for i := range vals {
		vals[i] = model.Value(i + 1)
	}
	var out []model.Renaming
	var perm func(i int)
	perm = func(i int) {
		if i == v {
			r := model.Identity()
			for j, x := range vals {
				r[j+1] = x
			}
			out = append(out, r)
			return
		}
		for j := i; j < v; j++ {
			vals[i], vals[j] = vals[j], vals[i]
			perm(i + 1)
			vals[i], vals[j] = vals[j], vals[i]
		}
	}
	perm(0)
	return out
}

// reachable is every state reachable from m's initial states, by a plain
// search with a map of states (no fingerprints), and the depth of the
// deepest.
func reachable[S comparable, A any](m explore.Machine[S, A]) (states []S, depth int) {
	seen := map[S]bool{}
	var front []S
	for _, s := range m.Init() {
		if !seen[s] {
			seen[s] = true
			front = append(front, s)
		}
	}
	depth = -1
	for len(front) > 0 {
		depth++
		states = append(states, front...)
		var next []S
		for _, s := range front {
			for _, a := range m.Actions(&s, nil) {
				if t := s; m.Next(&s, a, &t) && !seen[t] {
					seen[t] = true
					next = append(next, t)
				}
			}
		}
		front = next
	}
	return states, depth
}

// successors is the set of states s steps to.
func successors[S comparable, A any](m explore.Machine[S, A], s S) map[S]bool {
	out := map[S]bool{}
	for _, a := range m.Actions(&s, nil) {
		if t := s; m.Next(&s, a, &t) {
			out[t] = true
		}
	}
	return out
}

// Reference: §2.1 (values 1..V) — the engine's count up to value renaming
// is the number of orbits of the concrete reachable states under the
// permutations of 1..V, each orbit computed by applying every permutation
// (its least encoding names it), with neither Canonical nor the engine's
// seen-set. Generated is the steps of one state per orbit, depth is the
// concrete depth. With a fixed initial store, orbits under every
// permutation still count the classes: two reachable states share the
// initial store, so a renaming between them fixes its values.
func TestSymmetryOrbits(t *testing.T) {
	cfgs := []Config{
		{Keys: 2, Values: 3, Events: 2, Chunks: 1, Txn: 1},
		{Keys: 2, Values: 3, Events: 1, Chunks: 1, Txn: 1, InitialAny: true},
		{Keys: 2, Values: 3, Events: 2, Chunks: 1, Txn: 2, Initial: model.Store{1}},
	}
	for _, cfg := range cfgs {
		t.Run("classic "+cfg.String(), func(t *testing.T) {
			checkOrbits(t, cfg, symCase[classicState, classicAction]{newClassic(cfg).(*classic), classicRename})
		})
		t.Run("readonly "+cfg.String(), func(t *testing.T) {
			checkOrbits(t, cfg, symCase[readonlyState, readonlyAction]{newReadonly(cfg).(*readonly), readonlyRename})
		})
		t.Run("parallel "+cfg.String(), func(t *testing.T) {
			checkOrbits(t, cfg, symCase[parallelState, parallelAction]{newParallel(cfg, ParallelParts{}), parallelRename})
		})
		cfg1 := cfg
		cfg1.Chunks, cfg1.Mode = 1, DumpTrusted
		t.Run("dump "+cfg1.String(), func(t *testing.T) {
			checkOrbits(t, cfg1, symCase[dumpState, dumpAction]{newDump(cfg1), dumpRename})
		})
		cfg.Mode = CompositeMixed
		t.Run("composite "+cfg.String(), func(t *testing.T) {
			checkOrbits(t, cfg, symCase[compositeState, compositeAction]{newComposite(cfg), compositeRename})
		})
	}
}

func checkOrbits[S comparable, A any](t *testing.T, cfg Config, c symCase[S, A]) {
	states, depth := reachable[S, A](c.m)
	perms := renamings(cfg.Values)
	orbits := map[string]bool{}
	generated := 0
	var buf []byte
	for _, s := range states {
		least := ""
		for i := range perms {
			r := c.rename(s, &perms[i])
			buf = c.m.Encode(&r, buf[:0])
			if least == "" || string(buf) < least {
				least = string(buf)
			}
		}
		if !orbits[least] {
			orbits[least] = true
			generated += len(successors[S, A](c.m, s))
		}
	}
	r, err := explore.Run(context.Background(), explore.Machine[S, A](c.m), explore.Options{Workers: 2, Symmetry: true})
	if err != nil {
		t.Fatal(err)
	}
	st := r.Stats
	if r.Verdict != explore.Pass || st.Distinct != uint64(len(orbits)) || st.Generated != uint64(generated) || st.Depth != depth {
		t.Errorf("engine: %v %d distinct, %d generated, depth %d; want pass, %d orbits of %d states, %d generated, depth %d",
			r.Verdict, st.Distinct, st.Generated, st.Depth, len(orbits), len(states), generated, depth)
	}
	if len(orbits) >= len(states) && cfg.Values > 1 {
		t.Errorf("%d orbits of %d states: no reduction", len(orbits), len(states))
	}
}

// Reference: §2.1 — renaming the values commutes with every step and keeps
// every property's verdict, for each protocol as published and under each
// fault it implements (a fault must not single out a value): for every
// reachable state s and renaming π, the successors of π(s) are the renamed
// successors of s, each Always or Sometimes property holds in π(s) exactly
// when it holds in s, and Canonical gives π(s) the form of s. It is enough
// to check the two swaps (1 2) and (2 3): they generate every permutation
// of 1..3, and the reachable states are closed under them. Under the race
// detector (no goroutines here to race) every ninth state is checked.
func TestSymmetryEquivariant(t *testing.T) {
	base := Config{Keys: 2, Values: 3, Events: 2, Chunks: 1, Txn: 2}
	for _, p := range All() {
		for _, mode := range append([]string{""}, p.Limits.Modes...) {
			if len(p.Limits.Modes) > 0 && mode == "" {
				continue
			}
			for _, f := range append([]Fault{None}, p.Faults...) {
				cfg := base
				cfg.Mode, cfg.Fault = mode, f
				t.Run(p.Name+" "+cfg.String(), func(t *testing.T) {
					switch p.Name {
					case "classic":
						checkEquivariant(t, cfg, symCase[classicState, classicAction]{newClassic(cfg).(*classic), classicRename})
					case "readonly":
						checkEquivariant(t, cfg, symCase[readonlyState, readonlyAction]{newReadonly(cfg).(*readonly), readonlyRename})
					case "parallel":
						checkEquivariant(t, cfg, symCase[parallelState, parallelAction]{newParallel(cfg, ParallelParts{}), parallelRename})
					case "dump":
						checkEquivariant(t, cfg, symCase[dumpState, dumpAction]{newDump(cfg), dumpRename})
					case "composite":
						checkEquivariant(t, cfg, symCase[compositeState, compositeAction]{newComposite(cfg), compositeRename})
					default:
						t.Skipf("%s: not a shipped protocol", p.Name)
					}
				})
			}
		}
	}
}

func checkEquivariant[S comparable, A any](t *testing.T, cfg Config, c symCase[S, A]) {
	states, _ := reachable[S, A](c.m)
	perms := []model.Renaming{model.Identity(), model.Identity()}
	perms[0][1], perms[0][2] = 2, 1
	perms[1][2], perms[1][3] = 3, 2
	var props []explore.Property[S, A]
	for _, p := range c.m.Properties() {
		if p.Check != nil {
			props = append(props, p)
		}
	}
	bad, stride := 0, 1
	if classicRace {
		stride = 9
	}
	for n, s := range states {
		if n%stride != 0 {
			continue
		}
		succ := successors[S, A](c.m, s)
		canon := c.m.Canonical(&s)
		for i := range perms {
			r := &perms[i]
			ps := c.rename(s, r)
			want := map[S]bool{}
			for u := range succ {
				want[c.rename(u, r)] = true
			}
			if got := successors[S, A](c.m, ps); !mapsEqual(got, want) {
				t.Errorf("reachable state %d renamed by %v: %d successors, want the %d renamed ones", n, r[1:cfg.Values+1], len(got), len(want))
				bad++
			}
			for _, p := range props {
				if (p.Check(&s) == "") != (p.Check(&ps) == "") {
					t.Errorf("%s: %q in a state, %q in its renaming by %v", p.Name, p.Check(&s), p.Check(&ps), r[1:cfg.Values+1])
					bad++
				}
			}
			if c.m.Canonical(&ps) != canon {
				t.Errorf("canonical form differs within an orbit (renaming %v)", r[1:cfg.Values+1])
				bad++
			}
			if bad > 5 {
				t.FailNow()
			}
		}
	}
	if len(states) < 100 {
		t.Errorf("only %d reachable states: the check saw too little", len(states))
	}
}

func mapsEqual[K comparable](a, b map[K]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// Reference: §10, explore.Symmetric — a violation found up to value
// renaming has a concrete, shortest trace: it replays from Init by its
// action positions, its states are real ones (not canonical forms), and it
// is as long as the one found without the symmetry.
func TestSymmetryViolationReplays(t *testing.T) {
	tests := []struct {
		cfg  Config
		prop string
	}{
		{Config{Keys: 2, Values: 3, Events: 2, Chunks: 1, Txn: 1, Fault: NoDiscard}, "frontier-replay"},
		{Config{Keys: 2, Values: 3, Events: 2, Chunks: 2, Txn: 1, Fault: EarlyRelease, InitialAny: true}, "closed-unit-cut"},
	}
	for _, tt := range tests {
		t.Run(tt.cfg.String(), func(t *testing.T) {
			m := newClassic(tt.cfg)
			var lens []int
			for _, sym := range []bool{true, false} {
				r, err := explore.Run(context.Background(), m, explore.Options{Workers: 2, Symmetry: sym, Only: []string{tt.prop}})
				if err != nil {
					t.Fatal(err)
				}
				v := r.Violation
				if r.Verdict != explore.Violated || v.Property != tt.prop {
					t.Fatalf("symmetry %v: %v %+v, want %s violated", sym, r.Verdict, v, tt.prop)
				}
				s := m.Init()[v.Path[0]]
				if s != v.Trace[0].State {
					t.Fatalf("symmetry %v: initial state differs from Init()[%d]", sym, v.Path[0])
				}
				for i, j := range v.Path[1:] {
					acts := m.Actions(&s, nil)
					u := s
					m.Next(&s, acts[j], &u)
					s = u
					if s != v.Trace[i+1].State || !v.Trace[i+1].HasAction || fmt.Sprint(acts[j]) != fmt.Sprint(v.Trace[i+1].Action) {
						t.Fatalf("symmetry %v: replay step %d differs from the trace", sym, i+1)
					}
				}
				for _, p := range m.Properties() {
					if p.Name == tt.prop && p.Check(&s) == "" {
						t.Fatalf("symmetry %v: the replayed trace ends where %s holds", sym, tt.prop)
					}
				}
				lens = append(lens, len(v.Path))
			}
			if !slices.Equal(lens[:1], lens[1:]) {
				t.Errorf("trace length %d with symmetry, %d without", lens[0], lens[1])
			}
		})
	}
}

// Reference: explore.Options.CheckSymmetry — the value renaming of every
// shipped protocol, under every fault and mode, with an empty, a fixed and
// every initial store, and with a whole-server log, holds on every state a
// concrete run expands: the checking run ends with the verdict of a plain
// run, never an error. (One row per transaction under the race detector.)
func TestCheckSymmetryShipped(t *testing.T) {
	base := Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 2}
	if classicRace {
		base.Txn = 1
	}
	for _, p := range All() {
		if !slices.Contains(order, p.Name) {
			continue
		}
		for _, mode := range append([]string{""}, p.Limits.Modes...) {
			if len(p.Limits.Modes) > 0 && mode == "" {
				continue
			}
			for _, f := range append([]Fault{None}, p.Faults...) {
				cfgs := []Config{base}
				if f == None {
					fixed, any := base, base
					fixed.Initial[0] = 2
					any.InitialAny, any.Events = true, 1
					cfgs = append(cfgs, fixed, any)
				}
				if p.Limits.WholeServer && (f == None || f == OutsideEventForwarded || f == OffsetOnCapturedRows) {
					whole := base // the outside key's values are renamed too
					whole.WholeServer, whole.Txn, whole.Initial[0] = true, 1, 2
					cfgs = append(cfgs, whole)
				}
				for _, cfg := range cfgs {
					cfg.Mode, cfg.Fault = mode, f
					want, err := p.Check(context.Background(), cfg, explore.Options{Workers: 1, NoDeadlock: true})
					if err != nil {
						t.Fatalf("%s %v: %v", p.Name, cfg, err)
					}
					got, err := p.Check(context.Background(), cfg, explore.Options{Workers: 2, NoDeadlock: true, CheckSymmetry: true})
					if err != nil {
						t.Fatalf("%s %v: %v", p.Name, cfg, err)
					}
					if got.Verdict != want.Verdict || got.Stats.Distinct != want.Stats.Distinct {
						t.Fatalf("%s %v: checking run %v with %d states, plain run %v with %d", p.Name, cfg, got.Verdict, got.Stats.Distinct, want.Verdict, want.Stats.Distinct)
					}
				}
			}
		}
	}
}

// twoOffByOne is a classic window that is off by one (its first in-window
// event is missed) only when the chunk read the value 2: a part that looks
// at which value is which.
func twoOffByOne(u model.Unit) model.Window {
	w := u.Window()
	for k := range model.Key(model.MaxKeys) {
		if u.Read.Has(k) && u.Refresh[k] == 2 {
			w.Lo++
			break
		}
	}
	return w
}

// A variant whose part receives values and may tell them apart loses value
// renaming: --symmetry would hide its violation (final-replay fails at
// K2 V2 E2 C1 T1 without the symmetry, and a run up to value renaming
// passes), so it is refused, naming the part. Declared ValueBlind falsely,
// the reduction hides the violation again, and CheckSymmetry catches the
// declaration.
func TestSymmetryRefusedForValueParts(t *testing.T) {
	cfg := Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 1}
	p := Classic(ClassicParts{Window: twoOffByOne})
	p.Name = "classic-two"
	r, err := p.Check(context.Background(), cfg, explore.Options{Workers: 2})
	if err != nil || r.Verdict != explore.Violated || r.Violation.Property != "final-replay" {
		t.Fatalf("without the symmetry: %v, %+v; want final-replay violated", err, r.Violation)
	}
	_, err = p.Check(context.Background(), cfg, explore.Options{Workers: 2, Symmetry: true})
	var se *SymmetryError
	if !errors.Is(err, explore.ErrNoSymmetry) || !errors.As(err, &se) || se.Part != "Window" || !strings.Contains(err.Error(), "classic-two has no symmetry: its part Window receives values") {
		t.Fatalf("with the symmetry: error %v, want a SymmetryError naming Window", err)
	}

	lie := Classic(ClassicParts{Window: twoOffByOne, ValueBlind: true})
	if r, err := lie.Check(context.Background(), cfg, explore.Options{Workers: 2, Symmetry: true}); err != nil || r.Verdict != explore.Pass {
		t.Fatalf("declared value-blind, up to renaming: %v, %v; the reduction was expected to hide the violation", err, r.Verdict)
	}
	_, err = lie.Check(context.Background(), cfg, explore.Options{Workers: 2, CheckSymmetry: true})
	if err == nil || !strings.Contains(err.Error(), "the model's symmetry does not hold") {
		t.Fatalf("declared value-blind, checked: error %v, want the symmetry refuted", err)
	}

	// Every part that receives values, and none that does not.
	for _, c := range []struct {
		p    *Protocol
		part string
	}{
		{Classic(ClassicParts{Window: func(u model.Unit) model.Window { return u.Window() }}), "Window"},
		{Readonly(ReadonlyParts{Read: func(l model.Log, lo, c model.Coord) bool { return PublishedRead(&l, lo, c) }}), "Read"},
		{Readonly(ReadonlyParts{Sample: func(l model.Log) model.Coord { return l.Len() }}), "Sample"},
		{Parallel(ParallelParts{Gate: func(plan model.Plan, o int, pos model.Coord) bool { return PublishedGate(&plan, o, pos) }}), "Gate"},
		{Parallel(ParallelParts{Window: func(u model.Unit) model.Window { return u.Window() }}), "Window"},
		{Parallel(ParallelParts{ReaderStart: func(plan model.Plan) model.Coord { return MinHigh(&plan) }}), "ReaderStart"},
		{Dump(DumpParts{Claim: func(u model.Unit) model.Coord { return u.Hi }}), "Claim"},
		{Composite(CompositeParts{Onset: func(c model.Capture, at model.Coord) bool { return at == c.Pos }}), "Onset"},
		{Classic(ClassicParts{ConsumeDuringRead: true, ReleaseAtHighWrite: true}), ""},
		{Readonly(ReadonlyParts{Member: func(t uint8, low, high model.TxnSet) bool { return false }, ConsumeDuringRead: true}), ""},
		{Parallel(ParallelParts{Concurrent: true}), ""},
		{Dump(DumpParts{RecordRAfterView: true, ConsumeDuringRead: true}), ""},
		{Parallel(ParallelParts{Gate: func(plan model.Plan, o int, pos model.Coord) bool { return PublishedGate(&plan, o, pos) }, ValueBlind: true}), ""},
	} {
		if c.p.valueSeeing != c.part {
			t.Errorf("%s: part %q refuses the symmetry, want %q", c.p.Name, c.p.valueSeeing, c.part)
		}
	}
}
