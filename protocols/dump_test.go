package protocols

import (
	"context"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

func runDump(t *testing.T, cfg Config, workers int, only ...string) *explore.Result[dumpState, dumpAction] {
	t.Helper()
	r, err := explore.Run(context.Background(), explore.Model[dumpState, dumpAction](newDump(cfg)), explore.Options{Workers: workers, Only: only})
	if err != nil {
		t.Fatalf("%v: %v", cfg, err)
	}
	return r
}

// dumpSmall is a bound small enough for -race and -short.
func dumpSmall(mode string) Config {
	return Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 1, Mode: mode, InitialAny: true}
}

// Reference: §7.6 Prop 6, §7.7 Thm 8 — every invariant holds, and the result
// does not depend on the number of workers.
func TestDumpPasses(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"trusted 1 key", Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: DumpTrusted}},
		{"uncertain 1 key", Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: DumpUncertain}},
		{"trusted small", dumpSmall(DumpTrusted)},
		{"uncertain small", dumpSmall(DumpUncertain)},
		{"trusted txn 2", Config{Keys: 2, Values: 1, Events: 3, Chunks: 1, Txn: 2, Mode: DumpTrusted, InitialAny: true}},
		{"uncertain txn 2", Config{Keys: 2, Values: 1, Events: 3, Chunks: 1, Txn: 2, Mode: DumpUncertain, InitialAny: true}},
		{"uncertain fixed store", Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 2, Mode: DumpUncertain, Initial: model.Store{2, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r1 := runDump(t, tt.cfg, 1)
			if r1.Verdict != explore.Pass {
				t.Fatalf("%v: %v\n%s", tt.cfg, r1.Verdict, dumpViolation(newDump(tt.cfg), r1))
			}
			r2 := runDump(t, tt.cfg, 2)
			if r1.Stats.Distinct != r2.Stats.Distinct || r1.Stats.Generated != r2.Stats.Generated || r1.Stats.Depth != r2.Stats.Depth {
				t.Errorf("1 worker: %+v, 2 workers: %+v", r1.Stats, r2.Stats)
			}
		})
	}
}

// Reference: §6.4, §7.6–7.7 — exact counts, from an enumerator written from
// the paper's description with its own states (no engine, no fingerprints,
// no buffer: its close emits the survivors of Def. 6.2 straight from the
// definition, so agreeing counts also say the model's step-by-step buffer
// leaves the replay the definition gives).
//
// By hand, trusted at 1 key / 1 value / 1 event, empty base store. Before the
// dump: {} ; [k0:=1] ; [k0:=1] consumed ; [k0:=1] with s0 = 1 (4 states).
// Dump at r = 0 (nothing present): open; closed; open with the commit; closed
// with the commit; then position 1 consumed (5 states: the consumer waits at
// r = 0 until the close). Dump at r = 1 (k0=1 buffered): open; open with
// position 1 consumed; open with s0 = 1; closed from each of the last two
// (5 states; consuming before or after the dump meet in one state). 14 in
// all. Transitions: {} 2, [k0:=1] 3, consumed 1, s0 = 1 1; r = 0: open 2,
// closed 1, open with the commit 1, closed with the commit 1; r = 1: open 2,
// consumed 1, s0 = 1 1 — 16. With a whole-server log the event may instead
// be k1 := 1, outside the scope: [k1:=1], consumed (skipped), s0 = 1 (3);
// the dump at r = 0 open and closed with it, then position 1 consumed (3);
// the dump at r = 1, nothing present, as for k0 (5) — 25. Transitions: one
// more commit from {}, from r = 0 open and from r = 0 closed (3), and
// 3 + 1 + 1, 1 + 1 + 1, 2 + 1 + 1 from the new states — 30. With no-op
// writes the event may instead be k0 := ⊥, a delete of the absent key:
// consuming it emits k0 = ⊥@1 rather than skipping it, and the dump at r = 1
// again finds nothing present, so the same shape gives the same 25 and 30.
func TestDumpCounts(t *testing.T) {
	tests := []struct {
		cfg                 Config
		distinct, generated uint64
	}{
		{Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: DumpTrusted}, 14, 16},
		{Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: DumpUncertain}, 51, 78},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 1, Mode: DumpTrusted}, 129, 186},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 1, Mode: DumpUncertain}, 723, 1321},
		{Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 1, Mode: DumpUncertain, InitialAny: true}, 24255, 44811},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 2, Mode: DumpTrusted, InitialAny: true}, 668, 944},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 2, Mode: DumpUncertain, InitialAny: true}, 3476, 6300},
		// A whole-server log: key K outside the scope too, skipped.
		{Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: DumpTrusted, WholeServer: true}, 25, 30},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 2, Mode: DumpUncertain, InitialAny: true, WholeServer: true}, 7960, 14476},
		// No-op writes: an update to the key's value, a delete of an absent key.
		{Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: DumpTrusted, NoOps: true}, 25, 30},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 2, Mode: DumpUncertain, InitialAny: true, NoOps: true}, 13116, 23980},
	}
	for _, tt := range tests {
		t.Run(tt.cfg.String(), func(t *testing.T) {
			distinct, generated := bfDumpCount(tt.cfg)
			t.Logf("brute force: %d distinct, %d transitions", distinct, generated)
			if distinct != tt.distinct || generated != tt.generated {
				t.Errorf("brute force gives %d/%d, the literal says %d/%d", distinct, generated, tt.distinct, tt.generated)
			}
			r := runDump(t, tt.cfg, 2)
			if r.Verdict != explore.Pass || r.Stats.Distinct != distinct || r.Stats.Generated != generated {
				t.Errorf("engine: %v, %d distinct, %d generated; brute force: %d, %d", r.Verdict, r.Stats.Distinct, r.Stats.Generated, distinct, generated)
			}
		})
	}
}

// Reference: Prop 6, Thm 8, Example 7.1 — the races the invariants must
// survive are reached, and the copy decides a key at the frontier.
func TestDumpSometimes(t *testing.T) {
	for _, mode := range []string{DumpTrusted, DumpUncertain} {
		t.Run(mode, func(t *testing.T) {
			cfg := dumpPaper(mode)
			if testing.Short() || dumpRace {
				cfg = dumpSmall(mode)
			}
			r := runDump(t, cfg, 2)
			if r.Verdict != explore.Pass {
				t.Fatalf("%v: %v", cfg, r.Verdict)
			}
			if len(r.Sometimes) == 0 {
				t.Fatal("no sometimes properties")
			}
			for _, s := range r.Sometimes {
				if !s.Reached {
					t.Errorf("%v: %s not reached", cfg, s.Name)
				}
			}
			t.Logf("%v: %d distinct, depth %d, %v", cfg, r.Stats.Distinct, r.Stats.Depth, r.Stats.Elapsed)
		})
	}
}

// dumpPaper is a bound at the paper's sizes (§10: three keys, four events)
// that go test can afford.
func dumpPaper(mode string) Config {
	return Config{Keys: 3, Values: 2, Events: 4, Chunks: 1, Txn: 1, Mode: mode}
}

func dumpDefaults(mode string) Config {
	p, err := Lookup("dump")
	if err != nil {
		panic(err)
	}
	cfg := p.Defaults
	cfg.Mode = mode
	return cfg
}

// Reference: §10 mutated runs; Prop 6 (false trusted recovery point), Thm 8
// (claim inside the uncertainty bracket), Def. 6.2 (no discard; a window
// event met before the rows arrive), Thm 1 (a copy that never arrives).
// Each shortest trace is counted by hand in its comment.
func TestDumpFaults(t *testing.T) {
	one := func(mode string, f Fault) Config {
		return Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: mode, Fault: f, InitialAny: true}
	}
	tests := []struct {
		name   string
		cfg    Config
		breaks string
		steps  int // actions on the shortest trace
	}{
		// read view 0 (k0=1 buffered, from b0); commit k0 := ⊥ at 1; record
		// r = 1; consume 1 (or start later past it); close emits the stale
		// k0=1@1 ≠ σ_1 = ⊥. The commit must fall between the view and r.
		{"false-recovery-point", one(DumpTrusted, FalseRecoveryPoint), "frontier-replay", 5},
		// record b = 0; commit k0; commit k1; restore at v = 2; rows arrive;
		// record e = 2; consume 1, 2 (s0 ⊑ b = 0); close — claimed from 1,
		// sink_1(k1) = 1 ≠ σ_1(k1) = ⊥.
		{"claim-inside-uncertainty", Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 1, Mode: DumpUncertain, Fault: ClaimInsideUncertainty}, "latest-high-trajectory", 9},
		// b0 k0=1; record b = 0; restore k0=1 at v = 0; rows arrive; commit
		// k0 := ⊥; record e = 1; consume 1 (no discard); close emits k0=1.
		{"no-discard", one(DumpUncertain, NoDiscard), "frontier-replay", 7},
		// b0 k0=1; dump at r = 0; close emits nothing: replay ⊥ ≠ σ_0 = 1.
		{"copy-dropped trusted", one(DumpTrusted, CopyDropped), "frontier-replay", 2},
		// b0 k0=1; record b = 0; restore; rows arrive; record e = 0; close.
		{"copy-dropped uncertain", one(DumpUncertain, CopyDropped), "frontier-replay", 5},
		// b0 k0=1; record b = 0; restore k0=1 at v = 0; commit k0 := ⊥;
		// consume 1 before the rows arrive (not remembered); rows arrive,
		// k0=1 buffered; record e = 1; close resurrects k0=1.
		{"consumer-runs-during-read", one(DumpUncertain, ConsumerRunsDuringRead), "frontier-replay", 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newDump(tt.cfg)
			r := runDump(t, tt.cfg, 2, tt.breaks)
			if r.Verdict != explore.Violated || r.Violation.Property != tt.breaks {
				t.Fatalf("%v: want %s violated, got %v\n%s", tt.cfg, tt.breaks, r.Verdict, dumpViolation(m, r))
			}
			if got := len(r.Violation.Trace) - 1; got != tt.steps {
				t.Errorf("trace has %d steps, want %d\n%s", got, tt.steps, dumpViolation(m, r))
			}
			t.Logf("%s", dumpViolation(m, r))
			// The same fault at the defaults is killed too.
			cfg := dumpDefaults(tt.cfg.Mode)
			if testing.Short() || dumpRace {
				cfg = dumpSmall(tt.cfg.Mode)
			}
			cfg.Fault = tt.cfg.Fault
			if r := runDump(t, cfg, 2, tt.breaks); r.Verdict != explore.Violated || r.Violation.Property != tt.breaks {
				t.Errorf("%v: want %s violated, got %v", cfg, tt.breaks, r.Verdict)
			} else {
				t.Logf("%v: %s, %d steps", cfg, r.Violation.Property, len(r.Violation.Trace)-1)
			}
		})
	}
}

// dumpStepper drives a dump model by hand, insisting that each action is
// enabled and collecting the trace lines.
type dumpStepper struct {
	t     *testing.T
	m     *dump
	s     dumpState
	lines []string
}

func newDumpStepper(t *testing.T, cfg Config) *dumpStepper {
	m := newDump(cfg)
	return &dumpStepper{t: t, m: m, s: m.Init()[0]}
}

func (d *dumpStepper) enabled(a dumpAction) bool {
	for _, b := range d.m.Actions(&d.s, nil) {
		if b == a {
			return true
		}
	}
	return false
}

func (d *dumpStepper) step(kind dumpKind) { d.do(dumpAction{Kind: kind}) }

func (d *dumpStepper) commit(k model.Key, v model.Value) {
	d.do(dumpAction{Kind: dumpCommit, Txn: Txn{N: 1, Ev: [MaxTxn]model.Event{{Key: k, Img: v}}}})
}

func (d *dumpStepper) do(a dumpAction) {
	d.t.Helper()
	if !d.enabled(a) {
		d.t.Fatalf("%s is not enabled after\n%s", dumpKindNames[a.Kind], strings.Join(d.lines, "\n"))
	}
	d.lines = append(d.lines, d.m.Describe(&d.s, a))
	next := d.s
	if !d.m.Next(&d.s, a, &next) {
		d.t.Fatalf("%s changed nothing", dumpKindNames[a.Kind])
	}
	d.s = next
}

// holds checks every always-property on the current state.
func (d *dumpStepper) holds() {
	d.t.Helper()
	for _, p := range d.m.Properties() {
		if p.Kind == explore.Always && !p.OptIn {
			if r := p.Check(&d.s); r != "" {
				d.t.Errorf("%s: %s\n%s", p.Name, r, strings.Join(d.lines, "\n"))
			}
		}
	}
}

// Reference: Example 7.1 — a backup restores a = 4 (a row of the base
// store) at a view v in [b, e] (here v = b); after the view the source
// updates a to 6, inside the uncertainty window. Window-discard drops the
// buffered 4 on that update and the replay yields 6, whether the consumer
// meets the update after the rows arrive (the buffer entry is discarded) or
// before (the row is dropped when it arrives). Without the discard, or
// without remembering the early update, the stale 4 comes back.
func TestDumpExample71(t *testing.T) {
	const a = model.Key(0)
	run := func(fault Fault, early bool) *dumpStepper {
		d := newDumpStepper(t, Config{Keys: 1, Values: 6, Events: 1, Chunks: 1, Txn: 1, Mode: DumpUncertain, Initial: model.Store{4}, Fault: fault})
		d.step(dumpRecordB) // b = 0
		d.step(dumpRestore) // the view v = 0: a = 4
		if !early {
			d.step(dumpArrive) // buffer {a=4}
		}
		d.commit(a, 6)      // a := 6 at position 1, after the view
		d.step(dumpConsume) // position 1, in the window (0, e]
		if early {
			d.step(dumpArrive) // the rows arrive after the update was met
		}
		d.step(dumpRecordE) // e = 1: bracket (0, 1]
		d.step(dumpClose)
		return d
	}
	for _, early := range []bool{false, true} {
		d := run(None, early)
		t.Log("\n" + strings.Join(d.lines, "\n"))
		c := &d.s.Cap
		if u := &c.Plan.Units[0]; u.Lo != 0 || u.Hi != 1 || c.ReadAt[a] != 0 || u.Refresh[a] != 4 {
			t.Fatalf("restore: bracket (%d, %d], a=%v read at %d; want (0, 1], a=4 at 0", u.Lo, u.Hi, u.Refresh[a], c.ReadAt[a])
		}
		if c.Out.Val[a] != 6 || c.Log.Sigma(c.Pos, a) != 6 {
			t.Errorf("replay a = %v, σ_f(a) = %v; want 6, 6", c.Out.Val[a], c.Log.Sigma(c.Pos, a))
		}
		consumed, want := d.lines[4], "position 1: k0 := 6 in window (0, e], discards buffered k0, emitted"
		if early {
			consumed, want = d.lines[3], "position 1: k0 := 6 in window (0, e], k0's row will be dropped when it arrives, emitted"
			if !strings.Contains(d.lines[4], "buffer {}, dropped {k0=4}") {
				t.Errorf("the arrival does not show the drop:\n%s", strings.Join(d.lines, "\n"))
			}
		}
		if !strings.HasSuffix(consumed, want) || !strings.HasSuffix(d.lines[len(d.lines)-1], "emit nothing") {
			t.Errorf("trace does not show the discard:\n%s", strings.Join(d.lines, "\n"))
		}
		d.holds()
	}
	if d := run(NoDiscard, false); d.s.Cap.Out.Val[a] != 4 {
		t.Errorf("no-discard: replay a = %v, want the stale 4", d.s.Cap.Out.Val[a])
	}
	if d := run(ConsumerRunsDuringRead, true); d.s.Cap.Out.Val[a] != 4 {
		t.Errorf("consumer-runs-during-read: replay a = %v, want the stale 4", d.s.Cap.Out.Val[a])
	}
}

// Reference: Prop 6, §6.4 — the point splice by shape: consumption starts
// before r and emits (s0, r] at their places; while the dump is in flight the
// consumer waits at r; the close emits every present row at r, before every
// later event; the trajectory holds from r.
func TestDumpPointSplice(t *testing.T) {
	k0, k1 := model.Key(0), model.Key(1)
	d := newDumpStepper(t, Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 1, Mode: DumpTrusted, Initial: model.Store{1}})
	d.commit(k1, 2)     // position 1
	d.step(dumpConsume) // k1=2@1, s0 = 0
	d.step(dumpSplice)  // r = 1: k0=1 k1=2 buffered
	d.commit(k0, 2)     // position 2, while the dump is in flight
	if d.enabled(dumpAction{Kind: dumpConsume}) {
		t.Fatal("the consumer may pass r before the splice's rows are emitted")
	}
	d.step(dumpClose)   // k0=1@1 k1=2@1
	d.step(dumpConsume) // k0=2@2
	t.Log("\n" + strings.Join(d.lines, "\n"))
	c := &d.s.Cap
	if u := &c.Plan.Units[0]; u.Lo != 1 || u.Hi != 1 || c.ReadAt[k0] != 1 || c.ReadAt[k1] != 1 {
		t.Fatalf("splice: bracket (%d, %d], reads at %d, %d; want the point 1", u.Lo, u.Hi, c.ReadAt[k0], c.ReadAt[k1])
	}
	if !strings.HasSuffix(d.lines[2], "buffer {k0=1 k1=2}") || !strings.HasSuffix(d.lines[4], "emit k0=1@1 k1=2@1") {
		t.Errorf("the splice does not buffer and emit every present row at r:\n%s", strings.Join(d.lines, "\n"))
	}
	if c.Out.Val != c.Log.State(c.Pos) || c.Out.Tag[k0] != 2 || c.Out.Tag[k1] != 1 {
		t.Errorf("replay %v tags %v; want σ_2 = %v with k0@2, k1@1", c.Out.Val, c.Out.Tag, c.Log.State(c.Pos))
	}
	d.holds()
}

// Reference: §10 — states survive the spilled queue: Decode inverts Encode.
func TestDumpEncodeDecode(t *testing.T) {
	for _, mode := range []string{DumpTrusted, DumpUncertain} {
		m := newDump(dumpSmall(mode))
		seen := 0
		var walk func(s dumpState, depth int)
		walk = func(s dumpState, depth int) {
			enc := m.Encode(&s, nil)
			var back dumpState
			err := m.Decode(enc, &back)
			want := s
			want.Cap.Dup, want.Cap.Inexact = 0, 0 // marks of the step, not part of the state
			if err != nil || string(m.Encode(&back, nil)) != string(enc) || back != want {
				t.Fatalf("%s: round trip of %x failed: %v", mode, enc, err)
			}
			if err := m.Decode(enc[:len(enc)-1], new(dumpState)); err == nil {
				t.Fatalf("%s: short input accepted", mode)
			}
			seen++
			if depth == 0 {
				return
			}
			for _, a := range m.Actions(&s, nil) {
				if t2 := s; m.Next(&s, a, &t2) {
					walk(t2, depth-1)
				}
			}
		}
		for _, s := range m.Init()[:3] {
			walk(s, 5)
		}
		if seen < 100 {
			t.Errorf("%s: only %d states walked", mode, seen)
		}
	}
}

func dumpViolation(m *dump, r *explore.Result[dumpState, dumpAction]) string {
	if r.Violation == nil {
		return ""
	}
	var b strings.Builder
	for i, st := range r.Violation.Trace {
		if st.HasAction {
			b.WriteString(m.Describe(&r.Violation.Trace[i-1].State, st.Action) + "\n")
		}
	}
	b.WriteString(r.Violation.Property + ": " + r.Violation.Reason)
	return b.String()
}

// ---- An independent enumerator of the dump protocol (§6.4, §7.6–7.7). ----

// bfDump is a state as the paper describes it: the base store and the log
// (key, image, transaction label per position); how far the unit has got
// (0 nothing, 1 b recorded, 2 view taken, 3 bracket complete) with b, the
// latent view v and e (trusted: b = v = e = r); whether the rows have
// arrived; the consumer's start and position; whether the unit has closed;
// and the replay of what was emitted with each key's last tag.
type bfDump struct {
	init          [4]int8
	n             int
	key, img, txn [8]int8
	phase         int
	b, v, e       int
	arrived       bool
	s0, pos       int
	closed        bool
	val, tag      [4]int
}

func (s *bfDump) sigma(c, k int) int {
	v := int(s.init[k])
	for p := 0; p < c; p++ {
		if int(s.key[p]) == k {
			v = int(s.img[p])
		}
	}
	return v
}

func (s *bfDump) touched(k, lo, hi int) bool {
	for p := lo + 1; p <= hi; p++ {
		if int(s.key[p-1]) == k {
			return true
		}
	}
	return false
}

// bfDumpCount returns the distinct reachable states and the transitions
// taken from them (T ≤ 2).
func bfDumpCount(cfg Config) (distinct, transitions uint64) {
	uncertain := cfg.Mode == DumpUncertain
	seen := map[bfDump]bool{}
	var stack []bfDump
	push := func(s bfDump) {
		if !seen[s] {
			seen[s] = true
			stack = append(stack, s)
		}
	}
	// Base stores: the fixed one, or every store over the keys and values.
	stores := [][4]int8{{}}
	if cfg.InitialAny {
		for k := 0; k < cfg.Keys; k++ {
			var more [][4]int8
			for _, st := range stores {
				for v := 0; v <= cfg.Values; v++ {
					st[k] = int8(v)
					more = append(more, st)
				}
			}
			stores = more
		}
	} else {
		for k := 0; k < cfg.Keys; k++ {
			stores[0][k] = int8(cfg.Initial[k])
		}
	}
	for _, st := range stores {
		push(bfDump{init: st, b: -1, v: -1, e: -1})
	}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		var next []bfDump
		// The source commits 1..T row events on distinct keys, in any order,
		// each giving its key another value than before the transaction
		// (with no-op writes any value).
		label := int8(1)
		if s.n > 0 {
			label = s.txn[s.n-1] + 1
		}
		src := cfg.Keys // the keys the source writes: with a whole-server log key K too (§7.7)
		if cfg.WholeServer {
			src++
		}
		var extend func(t bfDump, size int)
		extend = func(t bfDump, size int) {
			for k := 0; k < src; k++ {
				if t.touched(k, s.n, t.n) {
					continue
				}
				for v := 0; v <= cfg.Values; v++ {
					if v == s.sigma(s.n, k) && !cfg.NoOps { // with no-op writes any value
						continue
					}
					u := t
					u.key[u.n], u.img[u.n], u.txn[u.n] = int8(k), int8(v), label
					u.n++
					next = append(next, u)
					if size+1 < cfg.Txn && u.n < cfg.Events {
						extend(u, size+1)
					}
				}
			}
		}
		if s.n < cfg.Events {
			extend(s, 0)
		}
		// The capture's next step.
		t := s
		switch {
		case !uncertain && s.phase == 0: // dump at r = the log's end, rows in hand
			t.phase, t.b, t.v, t.e, t.arrived = 3, s.n, s.n, s.n, true
			next = append(next, t)
		case uncertain && s.phase == 0: // record b
			t.phase, t.b = 1, s.n
			next = append(next, t)
		case s.phase == 1: // the view v = the log's end
			t.phase, t.v = 2, s.n
			next = append(next, t)
		case s.phase == 2: // record e
			t.phase, t.e = 3, s.n
			next = append(next, t)
		}
		if uncertain && s.phase >= 2 && !s.arrived { // the restored rows arrive
			t := s
			t.arrived = true
			next = append(next, t)
		}
		// The close: once the rows are in and the consumer stands at e,
		// every present read with no event in (b, e] (Def. 6.2), tagged e.
		if s.phase == 3 && s.arrived && !s.closed && s.pos == s.e {
			t := s
			for k := 0; k < cfg.Keys; k++ {
				if r := s.sigma(s.v, k); r != 0 && !s.touched(k, s.b, s.e) {
					t.val[k], t.tag[k] = r, s.e
				}
			}
			t.closed = true
			next = append(next, t)
		}
		// The consumer: the next position, never past e before the close;
		// or, having consumed nothing, a later start, at most the low edge.
		if s.pos < s.n && (s.phase < 3 || s.closed || s.pos < s.e) {
			t := s
			t.pos++
			if k := t.key[t.pos-1]; int(k) < cfg.Keys { // another table's row is skipped
				t.val[k], t.tag[k] = int(t.img[t.pos-1]), t.pos
			}
			next = append(next, t)
			bounded := (uncertain && s.phase >= 1) || (!uncertain && s.phase == 3)
			if s.pos == s.s0 && (!bounded || s.pos < s.b) {
				t := s
				t.s0++
				t.pos++
				next = append(next, t)
			}
		}
		transitions += uint64(len(next))
		for _, t := range next {
			push(t)
		}
	}
	return uint64(len(seen)), transitions
}
