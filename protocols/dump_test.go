package protocols

import (
	"context"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

func runDump(t *testing.T, cfg Config, workers int) *explore.Result[dumpState, dumpAction] {
	t.Helper()
	r, err := explore.Run(context.Background(), explore.Model[dumpState, dumpAction](newDump(cfg)), explore.Options{Workers: workers})
	if err != nil {
		t.Fatalf("%v: %v", cfg, err)
	}
	return r
}

// dumpSmall is a bound small enough for -race and -short.
func dumpSmall(mode string) Config {
	return Config{Keys: 2, Values: 2, Events: 3, Chunks: 1, Txn: 1, Mode: mode}
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
		{"trusted txn 2", Config{Keys: 2, Values: 1, Events: 3, Chunks: 1, Txn: 2, Mode: DumpTrusted}},
		{"uncertain txn 2", Config{Keys: 2, Values: 1, Events: 3, Chunks: 1, Txn: 2, Mode: DumpUncertain}},
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

// Reference: §7.6–7.7 — exact counts, from an enumerator written from the
// paper's description with its own states (no engine, no fingerprints).
//
// By hand, trusted at 1 key / 1 value / 1 event: the source commits k0 := 1
// before or after the dump. Before any dump: {} and [k0=1] (2 states). Dump at
// r = 0: open; open with the commit; closed; closed with the commit; then the
// consumer takes position 1 (5 states). Dump at r = 1: open; closed, k0=1
// emitted (2 states). 9 in all; 9 transitions (2 + 1 + 2 + 1 + 1 + 1 + 1).
//
// Uncertain at the same bound: 24 states (2 before b; b at 0 or 1 and the
// commit around the restore: 6 more; e recorded: 7; closed: 6), 26 transitions.
func TestDumpCounts(t *testing.T) {
	tests := []struct {
		cfg                 Config
		distinct, generated uint64
	}{
		{Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: DumpTrusted}, 9, 9},
		{Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: DumpUncertain}, 24, 26},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 1, Mode: DumpTrusted}, 55, 68},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 1, Mode: DumpUncertain}, 255, 328},
		{Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 1, Mode: DumpTrusted}, 187, 238},
		{Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 1, Mode: DumpUncertain}, 929, 1212},
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
// survive are reached.
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

// dumpPaper is the paper's largest bound (§10: three keys, four events), used
// where the defaults are too slow for go test.
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
// (claim inside the uncertainty bracket), Def. 6.2 (no discard).
func TestDumpFaults(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		breaks string
		steps  int // actions on the shortest trace
	}{
		// read k0=⊥ at v=0; commit k0 := 1; record r = 1; close: k0 stays ⊥ ≠ σ_1.
		{"false-recovery-point", Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: DumpTrusted, Fault: FalseRecoveryPoint}, "frontier-replay", 4},
		// record b=0; commit k0; commit k1; restore at v=2; record e=2;
		// consume 1, 2; close — claimed from 1, sink_1(k1) = 1 ≠ σ_1(k1) = ⊥.
		{"claim-inside-uncertainty", Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 1, Mode: DumpUncertain, Fault: ClaimInsideUncertainty}, "latest-high-trajectory", 8},
		// commit k0 := 1; record b=1; restore k0=1 at v=1; commit k0 := ⊥;
		// record e=2; consume 2; close emits the stale k0=1.
		{"no-discard", Config{Keys: 1, Values: 1, Events: 2, Chunks: 1, Txn: 1, Mode: DumpUncertain, Fault: NoDiscard}, "frontier-replay", 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newDump(tt.cfg)
			r := runDump(t, tt.cfg, 2)
			if r.Verdict != explore.Violated || r.Violation.Property != tt.breaks {
				t.Fatalf("%v: want %s violated, got %v\n%s", tt.cfg, tt.breaks, r.Verdict, dumpViolation(m, r))
			}
			if got := len(r.Violation.Trace) - 1; got != tt.steps {
				t.Errorf("trace has %d steps, want %d\n%s", got, tt.steps, dumpViolation(m, r))
			}
			t.Logf("%s", dumpViolation(m, r))
			// The same fault at the defaults is killed too.
			cfg := dumpDefaults(tt.cfg.Mode)
			cfg.Fault = tt.cfg.Fault
			if testing.Short() || dumpRace {
				cfg = dumpSmall(tt.cfg.Mode)
				cfg.Fault = tt.cfg.Fault
			}
			if r := runDump(t, cfg, 2); r.Verdict != explore.Violated || r.Violation.Property != tt.breaks {
				t.Errorf("%v: want %s violated, got %v", cfg, tt.breaks, r.Verdict)
			} else {
				t.Logf("%v: %s, %d steps", cfg, r.Violation.Property, len(r.Violation.Trace)-1)
			}
		})
	}
}

// Reference: Example 7.1 — a backup restores a = 4 at a view v in [b, e]
// (here v = b); after the view the source updates a to 6, inside the
// uncertainty window; window-discard drops the buffered 4 on that update and
// the replay yields 6. Without the discard the stale 4 comes back.
func TestDumpExample71(t *testing.T) {
	const a = model.Key(0)
	run := func(fault Fault) (dumpState, []string) {
		m := newDump(Config{Keys: 1, Values: 6, Events: 2, Chunks: 1, Txn: 1, Mode: DumpUncertain, Fault: fault})
		s := m.Init()[0]
		var lines []string
		step := func(a dumpAction) {
			t.Helper()
			found := false
			for _, b := range m.Actions(s, nil) {
				found = found || b == a
			}
			if !found {
				t.Fatalf("%+v is not enabled", a)
			}
			lines = append(lines, m.Describe(s, a))
			var ok bool
			if s, ok = m.Next(s, a); !ok {
				t.Fatalf("%+v changed nothing", a)
			}
		}
		commit := func(v model.Value) dumpAction {
			return dumpAction{Kind: dumpCommit, Txn: Txn{N: 1, Ev: [MaxTxn]model.Event{{Key: a, Img: v}}}}
		}
		step(commit(4))                     // a := 4 at position 1
		step(dumpAction{Kind: dumpRecordB}) // b = 1
		step(dumpAction{Kind: dumpRestore}) // the view v = 1: a = 4
		step(commit(6))                     // a := 6 at position 2, after the view
		step(dumpAction{Kind: dumpRecordE}) // e = 2: bracket (1, 2]
		step(dumpAction{Kind: dumpConsume}) // position 2: the in-window update discards buffered a=4
		step(dumpAction{Kind: dumpClose})   // nothing survives
		return s, lines
	}

	s, lines := run(None)
	t.Log("\n" + strings.Join(lines, "\n"))
	c := &s.Cap
	if u := &c.Plan.Units[0]; u.Lo != 1 || u.Hi != 2 || c.ReadAt[a] != 1 || u.Refresh[a] != 4 {
		t.Fatalf("restore: bracket (%d, %d], a=%v read at %d; want (1, 2], a=4 at 1", u.Lo, u.Hi, u.Refresh[a], c.ReadAt[a])
	}
	if c.Out.Val[a] != 6 || c.Log.Sigma(c.Pos, a) != 6 {
		t.Errorf("replay a = %v, σ_f(a) = %v; want 6, 6", c.Out.Val[a], c.Log.Sigma(c.Pos, a))
	}
	if !strings.Contains(lines[5], "k0 := 6, in window (1, e], discards buffered k0=4") || !strings.HasSuffix(lines[6], "emit nothing") {
		t.Errorf("trace does not show the discard:\n%s", strings.Join(lines, "\n"))
	}
	for _, p := range newDump(Config{Keys: 1, Values: 6, Events: 2, Chunks: 1, Txn: 1, Mode: DumpUncertain}).Properties() {
		if p.Kind == explore.Always {
			if r := p.Check(s); r != "" {
				t.Errorf("%s: %s", p.Name, r)
			}
		}
	}

	s, _ = run(NoDiscard)
	if s.Cap.Out.Val[a] != 4 {
		t.Errorf("no-discard: replay a = %v, want the stale 4", s.Cap.Out.Val[a])
	}
}

// Reference: §10 — states survive the spilled queue: Decode inverts Encode.
func TestDumpEncodeDecode(t *testing.T) {
	for _, mode := range []string{DumpTrusted, DumpUncertain} {
		m := newDump(dumpSmall(mode))
		seen := 0
		var walk func(s dumpState, depth int)
		walk = func(s dumpState, depth int) {
			enc := m.Encode(s, nil)
			back, err := m.Decode(enc)
			if err != nil || string(m.Encode(back, nil)) != string(enc) || back != s {
				t.Fatalf("%s: round trip of %x failed: %v", mode, enc, err)
			}
			if _, err := m.Decode(enc[:len(enc)-1]); err == nil {
				t.Fatalf("%s: short input accepted", mode)
			}
			seen++
			if depth == 0 {
				return
			}
			for _, a := range m.Actions(s, nil) {
				if t2, ok := m.Next(s, a); ok {
					walk(t2, depth-1)
				}
			}
		}
		walk(m.Init()[0], 6)
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
			b.WriteString(m.Describe(r.Violation.Trace[i-1].State, st.Action) + "\n")
		}
	}
	b.WriteString(r.Violation.Property + ": " + r.Violation.Reason)
	return b.String()
}

// ---- An independent enumerator of the dump protocol (§7.6–7.7). ----

// bfDump is a state as the paper describes it: the log, the recorded b, the
// latent view v and the recorded e (trusted: b = v = e = r), how far the
// consumer has got, whether the unit has closed, and the replay of what was
// emitted with each key's last tag.
type bfDump struct {
	n        int
	key, img [8]int8
	phase    int // 0 nothing; 1 b recorded; 2 view read; 3 bracket recorded
	b, v, e  int
	pos      int
	closed   bool
	val, tag [8]int
}

func (s *bfDump) sigma(c, k int) int {
	v := 0
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
// taken from them (T = 1).
func bfDumpCount(cfg Config) (distinct, transitions uint64) {
	uncertain := cfg.Mode == DumpUncertain
	seen := map[bfDump]bool{}
	var visit func(s bfDump)
	visit = func(s bfDump) {
		if seen[s] {
			return
		}
		seen[s] = true
		var next []bfDump
		// The source commits one row event changing its key (T = 1).
		if s.n < cfg.Events {
			for k := 0; k < cfg.Keys; k++ {
				for v := 0; v <= cfg.Values; v++ {
					if v != s.sigma(s.n, k) {
						t := s
						t.key[t.n], t.img[t.n] = int8(k), int8(v)
						t.n++
						next = append(next, t)
					}
				}
			}
		}
		t := s
		switch {
		case !uncertain && s.phase == 0: // dump at r = the log's end; the consumer starts at r
			t.phase, t.b, t.v, t.e, t.pos = 3, s.n, s.n, s.n, s.n
			next = append(next, t)
		case uncertain && s.phase == 0: // record b; the consumer starts at b
			t.phase, t.b, t.pos = 1, s.n, s.n
			next = append(next, t)
		case s.phase == 1: // restore at the view v = the log's end
			t.phase, t.v = 2, s.n
			next = append(next, t)
		case s.phase == 2: // record e; the consumer may go on replaying the window
			t.phase, t.e = 3, s.n
			next = append(next, t)
			if s.pos < s.n {
				next = append(next, bfDumpConsume(s))
			}
		case s.phase == 3 && !s.closed && s.pos == s.e: // close: present reads with no event in (b, e], tagged e
			for k := 0; k < cfg.Keys; k++ {
				if r := s.sigma(s.v, k); r != 0 && !s.touched(k, s.b, s.e) {
					t.val[k], t.tag[k] = r, s.e
				}
			}
			t.closed = true
			next = append(next, t)
		case s.phase == 3 && s.pos < s.n:
			next = append(next, bfDumpConsume(s))
		}
		transitions += uint64(len(next))
		for _, t := range next {
			visit(t)
		}
	}
	visit(bfDump{b: -1, v: -1, e: -1})
	return uint64(len(seen)), transitions
}

func bfDumpConsume(s bfDump) bfDump {
	s.pos++
	k := s.key[s.pos-1]
	s.val[k], s.tag[k] = int(s.img[s.pos-1]), s.pos
	return s
}
