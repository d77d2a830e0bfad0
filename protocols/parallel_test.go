package protocols

import (
	"context"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

func runParallel(t *testing.T, m explore.Model[parallelState, parallelAction], workers int) *explore.Result[parallelState, parallelAction] {
	t.Helper()
	r, err := explore.Run(context.Background(), m, explore.Options{Workers: workers})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return r
}

// parallelOnly checks a single named property of the model: the shortest
// trace that breaks that one claim, whatever else breaks on the way.
type parallelOnly struct {
	parallel
	prop string
}

func (m parallelOnly) Properties() []explore.Property[parallelState, parallelAction] {
	var out []explore.Property[parallelState, parallelAction]
	for _, p := range m.parallel.Properties() {
		if p.Name == m.prop {
			out = append(out, p)
		}
	}
	return out
}

// Reference: §7.5 Prop 5, §6.3 Thm 4, Thm 5, Lemma 6.3 — every invariant holds,
// and the engine finds exactly the states an independent enumeration finds.
func TestParallelPasses(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want uint64 // distinct states, from enumerateParallel; literal for the record
	}{
		// By hand: the log is [] or [k0=1]. With n = its length, idle: 2 states
		// (n = 0, 1); low recorded, nothing read: lo ≤ n, 3; read at ra:
		// lo ≤ ra ≤ n, 4; high: lo ≤ ra ≤ hi ≤ n, 5; closed, live reader at
		// pos with hi ≤ pos ≤ n: 1 + (2+1+1+1) = 6. Total 20.
		{"k1 v1 e1 c1", Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, 20},
		{"k2 v1 e2 c2", Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1}, 4363},
		{"k2 v2 e2 c2", Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1}, 16565},
		{"k2 v1 e2 c1 t2", Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 2}, 294},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			brute := enumerateParallel(tt.cfg)
			if brute != tt.want {
				t.Errorf("enumeration: %d distinct states, the literal says %d", brute, tt.want)
			}
			var first *explore.Result[parallelState, parallelAction]
			for _, w := range []int{1, 2} {
				r := runParallel(t, parallel{tt.cfg}, w)
				if r.Verdict != explore.Pass {
					t.Fatalf("workers=%d: verdict %v: %+v", w, r.Verdict, r.Violation)
				}
				if r.Stats.Distinct != brute {
					t.Errorf("workers=%d: engine found %d distinct states, enumeration %d", w, r.Stats.Distinct, brute)
				}
				if first == nil {
					first = r
				} else if r.Stats.Distinct != first.Stats.Distinct || r.Stats.Generated != first.Stats.Generated || r.Stats.Depth != first.Stats.Depth {
					t.Errorf("workers=%d: %+v, workers=1: %+v", w, r.Stats, first.Stats)
				}
			}
		})
	}
}

// Reference: §6.3, §7.5 — every race the invariants are about happens.
func TestParallelSometimes(t *testing.T) {
	cfg := Config{Keys: 2, Values: 2, Events: 3, Chunks: 2, Txn: 1}
	r := runParallel(t, parallel{cfg}, 2)
	if r.Verdict != explore.Pass {
		t.Fatalf("verdict %v: %+v", r.Verdict, r.Violation)
	}
	for _, s := range r.Sometimes {
		if !s.Reached {
			t.Errorf("%s (%s) not reached at %v", s.Name, s.Cite, cfg)
		}
	}
	for _, c := range r.Coverage {
		if c.Count == 0 {
			t.Errorf("action %s never taken", c.Name)
		}
	}
}

// Reference: §10 mutated runs; §6.3 Prop 3; §7.5 A-edge, A-read, A-handoff.
func TestParallelFaults(t *testing.T) {
	tests := []struct {
		fault Fault
		cfg   Config
		first string // the property the full run reports first
		steps int    // length of its shortest trace (actions)
		// breaks is the invariant the fault is meant to break, and the length
		// of its own shortest trace when it is checked alone.
		breaks string
		bSteps int
	}{
		// Prop 3's narrowed gate streams pre-low events. The first thing that
		// breaks is monotonicity: a key inserted before its chunk's low edge
		// and read present is re-emitted, tagged with its old position, after
		// the merged entry tagged hi. Checked alone, frontier-replay fails
		// with Prop 3's own shape (TestParallelProposition3).
		{WindowOnlyWithholding, Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1}, "per-key-monotonicity", 11, "frontier-replay", 12},
		// k0 := 1 right after the high edge is dropped by the gate.
		{GateDropsBoundary, Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, "frontier-replay", 6, "frontier-replay", 6},
		// An event of the chunk with the larger high edge, after the minimum
		// high, is emitted again after that chunk's merged block.
		{GateRepeatsWindow, Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1}, "per-key-monotonicity", 11, "per-key-monotonicity", 11},
		// k0 read ⊥, inserted in the window: the raw read loses the insert.
		{SkippedBackfill, Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, "frontier-replay", 5, "frontier-replay", 5},
		// The only present row is dropped by the scan.
		{ScanSkipsRow, Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, "frontier-replay", 5, "frontier-replay", 5},
		// The split assigner's plan already breaks O1 in the initial state.
		{OverlappingChunks, Config{Keys: 2, Values: 1, Events: 1, Chunks: 2, Txn: 1}, "contract", 0, "contract", 0},
		// The window's only event, at lo+1, is not backfilled.
		{LowEdgeOffByOne, Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, "frontier-replay", 5, "frontier-replay", 5},
		// The window's only event, at hi, is not backfilled.
		{HighEdgeOffByOne, Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, "frontier-replay", 5, "frontier-replay", 5},
		// k0 is read after the high offset and after k0 := 1: the merged
		// entry is ahead of the frontier, and O2 fails at the same close
		// (frontier-replay is listed first, so it is reported; with two
		// chunks closed-unit-cut is reported at the first chunk's close).
		{HighBeforeRead, Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, "frontier-replay", 5, "contract", 5},
	}
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			cfg := tt.cfg
			cfg.Fault = tt.fault
			r := runParallel(t, parallel{cfg}, 2)
			if r.Verdict != explore.Violated || r.Violation.Property != tt.first || len(r.Violation.Trace)-1 != tt.steps {
				t.Fatalf("want %s in %d steps; got %v %s", tt.first, tt.steps, r.Verdict, describeViolation(parallel{cfg}, r))
			}
			if tt.breaks == tt.first {
				if tt.bSteps != tt.steps {
					t.Fatalf("table: %s is reported first, so its own trace is the same %d steps", tt.first, tt.steps)
				}
				return
			}
			r = runParallel(t, parallelOnly{parallel{cfg}, tt.breaks}, 2)
			if r.Verdict != explore.Violated || r.Violation.Property != tt.breaks || len(r.Violation.Trace)-1 != tt.bSteps {
				t.Fatalf("%s alone: want a violation in %d steps; got %v %s", tt.breaks, tt.bSteps, r.Verdict, describeViolation(parallel{cfg}, r))
			}
		})
	}
}

// Reference: §6.3 Proposition 3 (withholding is necessary), §7.5 A-handoff.
// With the narrowed gate the shortest frontier-replay failure is Prop 3's
// instance: a key inserted before its chunk's low edge and deleted inside its
// window. The merged block is empty, but the live reader — started at the
// other chunk's lower high edge — streams the insert, resurrecting the key.
func TestParallelProposition3(t *testing.T) {
	cfg := Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, Fault: WindowOnlyWithholding}
	m := parallel{cfg}
	r := runParallel(t, parallelOnly{m, "frontier-replay"}, 2)
	if r.Verdict != explore.Violated {
		t.Fatalf("verdict %v, want frontier-replay violated", r.Verdict)
	}
	want := []string{
		"chunk 1 records low offset 0",
		"chunk 1 reads k0 = ⊥ at position 0",
		"chunk 1 records high offset 0",
		"source commits k1 := 1 at position 1",
		"chunk 1 backfills (0, 0] and emits merged {} at 0",
		"chunk 2 records low offset 1",
		"source commits k1 := ⊥ at position 2",
		"chunk 2 reads k1 = ⊥ at position 2",
		"chunk 2 records high offset 2",
		"chunk 2 backfills (1, 2] and emits merged {} at 2; live reader starts at 0 (minimum high)",
		"live reader consumes position 1: k1 := 1, chunk 2 high 2, emitted",
		"live reader consumes position 2: k1 := ⊥, chunk 2 high 2, withheld",
	}
	tr := r.Violation.Trace
	var got []string
	for i := 1; i < len(tr); i++ {
		got = append(got, m.Describe(tr[i-1].State, tr[i].Action))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("trace:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The shape, read off the final state rather than the words.
	c := &tr[len(tr)-1].State.Cap
	a := model.Key(1)
	u := &c.Plan.Units[c.Plan.Owner(a)]
	ins, del := c.Log.At(1), c.Log.At(2)
	switch {
	case c.Log.Len() != 2 || ins.Key != a || ins.Img == model.Absent || del.Key != a || del.Img != model.Absent:
		t.Errorf("log %v: want an insert of %v and its delete", c.Log.Ev[:c.Log.N], a)
	case !(1 <= u.Lo && u.Window().Contains(2)):
		t.Errorf("bracket %v: want the insert at or before the low edge and the delete inside the window", u.Window())
	case u.Merged(&c.Log, a) != model.Absent:
		t.Errorf("merged %v = %v, want ⊥ (an empty merged block)", a, u.Merged(&c.Log, a))
	case !(c.Start < 1):
		t.Errorf("live reader starts at %d, want before the insert (the other chunk's high edge)", c.Start)
	case c.Out.Val[a] != ins.Img || c.Out.Tag[a] != 1 || c.Log.Sigma(c.Pos, a) != model.Absent:
		t.Errorf("replay %v=%v@%d, σ = %v: want the deleted insert resurrected", a, c.Out.Val[a], c.Out.Tag[a], c.Log.Sigma(c.Pos, a))
	}
	// The lawful gate on the same instance: every invariant holds.
	if r := runParallel(t, parallel{Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1}}, 2); r.Verdict != explore.Pass {
		t.Errorf("lawful gate: %v", r.Verdict)
	}
}

// Decode inverts Encode on every reachable state, and refuses short input.
func TestParallelEncoding(t *testing.T) {
	m := parallel{Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1, Fault: HighBeforeRead}}
	seen := map[string]bool{}
	queue := m.Init()
	var buf []parallelAction
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		enc := m.Encode(s, nil)
		if seen[string(enc)] {
			continue
		}
		seen[string(enc)] = true
		d, err := m.Decode(enc)
		if err != nil || d != s {
			t.Fatalf("Decode(Encode(s)) = %+v, %v; want %+v", d, err, s)
		}
		if _, err := m.Decode(enc[:len(enc)-1]); err == nil {
			t.Fatalf("Decode accepted a truncated encoding")
		}
		buf = m.Actions(s, buf[:0])
		for _, a := range buf {
			if next, ok := m.Next(s, a); ok {
				queue = append(queue, next)
			}
		}
	}
}

func describeViolation(m parallel, r *explore.Result[parallelState, parallelAction]) string {
	if r.Violation == nil {
		return "(no violation)"
	}
	v := r.Violation
	var b strings.Builder
	b.WriteString(v.Property + ": " + v.Reason + "\n")
	for i, st := range v.Trace {
		if st.HasAction {
			b.WriteString("  " + m.Describe(v.Trace[i-1].State, st.Action) + "\n")
		}
	}
	return b.String()
}

// enumerateParallel counts the distinct reachable states of §7.5's protocol
// by plain recursion, written from the paper's description with its own
// state and a Go map for the seen set (no explore, no model.Capture).
func enumerateParallel(cfg Config) uint64 {
	type state struct {
		n      int
		key    [model.MaxLog]int8
		img    [model.MaxLog]int8
		txn    [model.MaxLog]int8
		phase  [4]int8 // 0 idle, 1 reading, 2 high recorded, 3 closed
		lo, hi [4]int8
		read   [8]bool
		rv, ra [8]int8
		out    [8]int8 // replay of the emitted stream
		tag    [8]int8
		start  int8
		pos    int8
	}
	K, C := cfg.Keys, cfg.Chunks
	owner := func(k int) int { // chunk i owns [i*K/C, (i+1)*K/C)
		for i := 0; i < C; i++ {
			if i*K/C <= k && k < (i+1)*K/C {
				return i
			}
		}
		return -1
	}
	sigma := func(s *state, c int, k int) int8 {
		v := int8(0)
		for p := 0; p < c; p++ {
			if int(s.key[p]) == k {
				v = s.img[p]
			}
		}
		return v
	}
	seen := map[state]bool{}
	var visit func(s state)
	visit = func(s state) {
		if seen[s] {
			return
		}
		seen[s] = true
		// The source commits 1..T events on distinct keys in key order, each
		// changing its key, while fewer than E events exist.
		var commit func(t state, from, room int)
		commit = func(t state, from, room int) {
			for k := from; k < K; k++ {
				for v := 0; v <= cfg.Values; v++ {
					if int8(v) == sigma(&t, t.n, k) {
						continue
					}
					u := t
					u.key[u.n], u.img[u.n] = int8(k), int8(v)
					u.txn[u.n] = 1
					if s.n > 0 {
						u.txn[u.n] = s.txn[s.n-1] + 1
					}
					u.n++
					visit(u)
					if room > 1 {
						commit(u, k+1, room-1)
					}
				}
			}
		}
		if room := min(cfg.Txn, cfg.Events-s.n); room > 0 {
			commit(s, 0, room)
		}
		for i := 0; i < C; i++ {
			keys := []int{}
			for k := 0; k < K; k++ {
				if owner(k) == i {
					keys = append(keys, k)
				}
			}
			switch s.phase[i] {
			case 0: // record the low offset
				t := s
				t.phase[i], t.lo[i] = 1, int8(s.n)
				visit(t)
			case 1: // read the next key, or record the high offset once all are read
				next := -1
				for _, k := range keys {
					if !s.read[k] {
						next = k
						break
					}
				}
				t := s
				if next >= 0 {
					t.read[next], t.rv[next], t.ra[next] = true, sigma(&s, s.n, next), int8(s.n)
				} else {
					t.phase[i], t.hi[i] = 2, int8(s.n)
				}
				visit(t)
			case 2: // backfill (lo, hi] and emit the merged unit, tagged hi
				t := s
				for _, k := range keys {
					m := s.rv[k]
					for p := int(s.lo[i]); p < int(s.hi[i]); p++ {
						if int(s.key[p]) == k {
							m = s.img[p]
						}
					}
					if m != 0 {
						t.out[k], t.tag[k] = m, s.hi[i]
					}
				}
				t.phase[i] = 3
				all := true
				for j := 0; j < C; j++ {
					all = all && t.phase[j] == 3
				}
				if all { // the live reader starts at the minimum high
					h := t.hi[0]
					for j := 1; j < C; j++ {
						h = min(h, t.hi[j])
					}
					t.start, t.pos = h, h
				}
				visit(t)
			}
		}
		live := true
		for j := 0; j < C; j++ {
			live = live && s.phase[j] == 3
		}
		if live && int(s.pos) < s.n { // consume; pass only beyond the owner's high
			t := s
			t.pos++
			k := int(s.key[s.pos])
			if t.pos > s.hi[owner(k)] {
				t.out[k], t.tag[k] = s.img[s.pos], t.pos
			}
			visit(t)
		}
	}
	visit(state{})
	return uint64(len(seen))
}
