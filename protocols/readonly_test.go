package protocols

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
)

func newReadonlyModel(cfg Config) *readonly { return newReadonly(cfg).(*readonly) }

// Reference: §7.4, Thm 7, Prop 4 — every invariant holds on the read-only
// capture, and the counts do not depend on the number of workers.
func TestReadonlyPasses(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		slow bool
	}{
		{"1 key", Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, false},
		{"2 keys 2 chunks", Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 2}, false},
		{"2 keys 1 chunk txn 2", Config{Keys: 2, Values: 2, Events: 3, Chunks: 1, Txn: 2}, false},
		{"3 keys 3 events", Config{Keys: 3, Values: 2, Events: 3, Chunks: 2, Txn: 2}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.slow && wdSmall() {
				t.Skip("short or race build")
			}
			m := newReadonly(tt.cfg)
			r1 := wdRun(t, m, 1)
			if r1.Verdict != explore.Pass {
				t.Fatalf("%v: %v\n%s", tt.cfg, r1.Verdict, wdTrace(m, r1.Violation))
			}
			r2 := wdRun(t, m, 2)
			if r1.Stats.Distinct != r2.Stats.Distinct || r1.Stats.Generated != r2.Stats.Generated || r1.Stats.Depth != r2.Stats.Depth {
				t.Errorf("1 worker: %+v; 2 workers: %+v", r1.Stats, r2.Stats)
			}
			for _, c := range r1.Coverage {
				if c.Count == 0 {
					t.Errorf("action %s never taken", c.Name)
				}
			}
		})
	}
}

// Reference: §7.4, A-discard — exact counts, from an enumerator written from
// the paper's description (bfReadonly below: its own states, a Go map as the
// seen set, no engine and no fingerprints).
//
// By hand, at 1 key / 1 value / 1 event / 1 chunk the source commits x =
// k0 := 1 once; the capture samples low (SL), reads k0 (RK), samples high
// (SH); the consumer consumes x or releases:
//   - before SL: {} ; [x] ; [x] consumed                                 3
//   - SL at 0: {} ; [x] ; [x] consumed. SL at 1: [x], consumed or not    5
//   - RK: lo 0 read ⊥: {} ; [x] ; [x] consumed. lo 0 read 1: unconsumed;
//     consumed before the read (k0 stays buffered); read then consumed
//     (in window: discarded). lo 1 read 1: consumed or not              8
//   - SH: lo 0, read ⊥, hi 0: sampled, released, each with or without
//     [x], and [x] consumed after the release (5); lo 0, read ⊥, hi 1:
//     unconsumed, consumed, released (3); lo 0, read 1, hi 1: unconsumed;
//     consumed with k0 buffered or discarded; released — one state, since
//     the survivor k0=1@1 replays like the event (4); lo 1, read 1, hi 1:
//     unconsumed, consumed, released (3)                                15
//
// 31 states in all.
func TestReadonlyCounts(t *testing.T) {
	tests := []struct {
		cfg                       Config
		distinct, generated, deep int
	}{
		{Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, 31, 37, 6},
		{Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 2}, 4469, 6080, 12},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 2}, 705, 1009, 9},
	}
	for _, tt := range tests {
		t.Run(tt.cfg.String(), func(t *testing.T) {
			bf := bfReadonly(tt.cfg)
			if bf.distinct != tt.distinct || bf.generated != tt.generated || bf.depth != tt.deep {
				t.Errorf("enumerator: %d distinct, %d generated, depth %d; want %d, %d, %d",
					bf.distinct, bf.generated, bf.depth, tt.distinct, tt.generated, tt.deep)
			}
			r := wdRun(t, newReadonly(tt.cfg), 2)
			if r.Verdict != explore.Pass || r.Stats.Distinct != uint64(bf.distinct) || r.Stats.Generated != uint64(bf.generated) || r.Stats.Depth != bf.depth {
				t.Errorf("engine: %v %+v; enumerator %d distinct, %d generated, depth %d",
					r.Verdict, r.Stats, bf.distinct, bf.generated, bf.depth)
			}
		})
	}
}

// Reference: §7.4, Prop 1, Thm 7 — the invariants bite on real races: every
// Sometimes property is reached.
func TestReadonlySometimes(t *testing.T) {
	cfg := Config{Keys: 3, Values: 2, Events: 2, Chunks: 2, Txn: 2}
	r := wdRun(t, newReadonly(cfg), 2)
	if r.Verdict != explore.Pass {
		t.Fatalf("%v", r.Verdict)
	}
	wdReached(t, r)
}

// readonlyFaultCfg is the bound the fault tests run at: chunk 2 owns two keys
// and a transaction may write two rows.
var readonlyFaultCfg = Config{Keys: 3, Values: 2, Events: 2, Chunks: 2, Txn: 2}

// Reference: Prop 1, Thm 7, §10, A-discard — each fault is killed. first is
// the invariant the full model reports, with its shortest trace; breaks is the
// invariant the fault is meant to break, checked alone, with the length of its
// own shortest trace.
func TestReadonlyFaults(t *testing.T) {
	tests := []struct {
		fault       Fault
		first       string
		firstSteps  int
		breaks      string
		breaksSteps int
	}{
		{SharedReadInstant, "single-read-point", 12, "single-read-point", 12},
		{InteriorExecutedSet, "executed-set-membership", 4, "executed-set-membership", 4},
		{SplitTransaction, "committed-only", 1, "committed-only", 1},
		{NoDiscard, "closed-unit-cut", 8, "frontier-replay", 13},
		{ReleaseBeforeLastRow, "closed-unit-cut", 11, "closed-unit-cut", 11},
	}
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			cfg := readonlyFaultCfg
			cfg.Fault = tt.fault
			m := newReadonly(cfg)
			r := wdRun(t, m, 2)
			if r.Verdict != explore.Violated || r.Violation.Property != tt.first || len(r.Violation.Trace)-1 != tt.firstSteps {
				t.Errorf("full model: want %s in %d steps, got %v\n%s", tt.first, tt.firstSteps, r.Verdict, wdTrace(m, r.Violation))
			}
			only := wdOnly[readonlyState, readonlyAction]{m, []string{tt.breaks}}
			r = wdRun(t, only, 2)
			if r.Verdict != explore.Violated || r.Violation.Property != tt.breaks || len(r.Violation.Trace)-1 != tt.breaksSteps {
				t.Errorf("%s alone: want a violation in %d steps, got %v\n%s", tt.breaks, tt.breaksSteps, r.Verdict, wdTrace(m, r.Violation))
			}
			t.Logf("%s: %s", tt.fault, wdTrace(m, r.Violation))
		})
	}
}

// Reference: Proposition 1 (§4.3), §10 "a forced shared read instant rejects
// Proposition 1's per-key construction" — the shortest counterexample to the
// single-read-point claim has Proposition 1's shape: two keys of one chunk
// read at different positions inside its bracket, each valid at its own
// position, no single position explaining both; the contract and the cut
// still hold.
func TestReadonlyProposition1(t *testing.T) {
	cfg := readonlyFaultCfg
	cfg.Fault = SharedReadInstant
	m := newReadonly(cfg)
	r := wdRun(t, m, 2)
	if r.Violation == nil || r.Violation.Property != invariants.SingleReadPoint.Name {
		t.Fatalf("want single-read-point, got\n%s", wdTrace(m, r.Violation))
	}
	c := &r.Violation.Trace[len(r.Violation.Trace)-1].State.Cap
	found := false
	for i := 0; i < int(c.Plan.N); i++ {
		u := &c.Plan.Units[i]
		if !c.UnitClosed(i) {
			continue
		}
		for a := model.Key(0); a < model.Key(cfg.Keys); a++ {
			for b := a + 1; b < model.Key(cfg.Keys); b++ {
				if !u.Domain.Has(a) || !u.Domain.Has(b) || c.ReadAt[a] == c.ReadAt[b] {
					continue
				}
				inBracket := func(k model.Key) bool { return u.Lo <= c.ReadAt[k] && c.ReadAt[k] <= u.Hi }
				valid := func(k model.Key) bool { return u.Refresh[k] == c.Log.Sigma(c.ReadAt[k], k) }
				if !inBracket(a) || !inBracket(b) || !valid(a) || !valid(b) {
					continue
				}
				shared := false
				for g := u.Lo; g <= u.Hi; g++ {
					shared = shared || (u.Refresh[a] == c.Log.Sigma(g, a) && u.Refresh[b] == c.Log.Sigma(g, b))
				}
				if !shared {
					found = true
					t.Logf("chunk %d, bracket %v: %v=%v read at %d, %v=%v read at %d; no c in [%d, %d] explains both",
						i+1, u.Window(), a, u.Refresh[a], c.ReadAt[a], b, u.Refresh[b], c.ReadAt[b], u.Lo, u.Hi)
				}
			}
		}
	}
	if !found {
		t.Fatalf("not Proposition 1's shape:\n%s", wdTrace(m, r.Violation))
	}
	if s := invariants.CheckContract(c, cfg.Chunks); s != "" {
		t.Errorf("contract: %s", s)
	}
	if s := invariants.CheckClosedUnitCut(c); s != "" {
		t.Errorf("closed-unit-cut: %s", s)
	}
}

// Reference: §10 "the boundary-valid window-discard replay survives" — under
// interior-executed-set, Theorem 7's membership test breaks, while frontier
// replay, checked alone, holds over the whole bounded space.
func TestReadonlyInteriorReplaySurvives(t *testing.T) {
	cfg := Config{Keys: 3, Values: 2, Events: 3, Chunks: 2, Txn: 2, Fault: InteriorExecutedSet}
	if wdSmall() {
		cfg = Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 2, Fault: InteriorExecutedSet}
	}
	m := newReadonly(cfg)
	r := wdRun(t, wdOnly[readonlyState, readonlyAction]{m, []string{invariants.FrontierReplay.Name}}, 2)
	if r.Verdict != explore.Pass {
		t.Fatalf("frontier-replay: %v\n%s", r.Verdict, wdTrace(m, r.Violation))
	}
	t.Logf("interior-executed-set: frontier-replay survives (%v, %d states, depth %d)", cfg, r.Stats.Distinct, r.Stats.Depth)
}

// Reference: §7.4 A-discard, Lemma 6.1, Thm 3 — releasing the buffer once the
// first row of the window's last transaction is processed closes the unit
// while later rows of that transaction are unprocessed: closed-unit-cut fails
// (the table above). Monotonicity fails only when a stale survivor is followed
// by a row below hi, which takes a transaction of three rows; with two, the
// remaining row sits at hi itself and ties with the survivor's tag. The final
// replay is right either way — every row reaches the stream after the release
// — so frontier replay alone survives.
func TestReadonlyReleaseBeforeLastRow(t *testing.T) {
	tests := []struct {
		cfg    Config
		prop   string
		passes bool
	}{
		{Config{Keys: 3, Values: 2, Events: 3, Chunks: 2, Txn: 2}, invariants.Monotonic.Name, true},
		{Config{Keys: 3, Values: 1, Events: 4, Chunks: 1, Txn: 3}, invariants.Monotonic.Name, false},
		{Config{Keys: 3, Values: 2, Events: 3, Chunks: 2, Txn: 2}, invariants.FrontierReplay.Name, true},
		{Config{Keys: 3, Values: 1, Events: 4, Chunks: 1, Txn: 3}, invariants.FrontierReplay.Name, true},
	}
	for _, tt := range tests {
		t.Run(tt.prop+" "+tt.cfg.String(), func(t *testing.T) {
			if tt.passes && wdSmall() {
				t.Skip("short or race build")
			}
			tt.cfg.Fault = ReleaseBeforeLastRow
			m := newReadonly(tt.cfg)
			r := wdRun(t, wdOnly[readonlyState, readonlyAction]{m, []string{tt.prop}}, 2)
			if (r.Verdict == explore.Pass) != tt.passes {
				t.Fatalf("%s: %v\n%s", tt.prop, r.Verdict, wdTrace(m, r.Violation))
			}
			if r.Violation != nil {
				t.Logf("%d steps: %s", len(r.Violation.Trace)-1, wdTrace(m, r.Violation))
			} else {
				t.Logf("holds over %d states", r.Stats.Distinct)
			}
		})
	}
}

// Reference: §7.4 — reads are per key: each key of a chunk is read by its own
// select at its own position, and the samples are the executed sets at the
// log end.
func TestReadonlyPerKeyReads(t *testing.T) {
	m := newReadonlyModel(Config{Keys: 2, Values: 2, Events: 3, Chunks: 1, Txn: 2})
	two := Txn{N: 2, Ev: [MaxTxn]model.Event{{Key: 0, Img: 1}, {Key: 1, Img: 2}}}
	s := m.Init()[0]
	s = m.commit(s, two)                                                  // t1 at 1–2
	s = m.sampleLow(s)                                                    // G(2) = {t1}
	s = m.readKey(s)                                                      // k0 = 1 at 2
	s = m.commit(s, Txn{N: 1, Ev: [MaxTxn]model.Event{{Key: 1, Img: 0}}}) // t2 at 3: k1 := ⊥
	s = m.readKey(s)                                                      // k1 = ⊥ at 3
	s = m.sampleHigh(s)                                                   // G(3) = {t1 t2}
	u := s.Cap.Plan.Units[0]
	if u.Lo != 2 || u.Hi != 3 || s.Cap.ReadAt[0] != 2 || s.Cap.ReadAt[1] != 3 || u.Refresh[0] != 1 || u.Refresh[1] != 0 {
		t.Fatalf("unit %+v, reads at %v", u, s.Cap.ReadAt)
	}
	if s.Buf != model.KeySet(0).With(0) {
		t.Fatalf("buffer %b", s.Buf)
	}
	// The consumer walks the log: t1 lies before the window, t2 inside it.
	for _, want := range []bool{false, false, true} {
		if got := m.inWindow(&s, s.Cap.Pos+1); got != want {
			t.Fatalf("position %d: in window %v, want %v", s.Cap.Pos+1, got, want)
		}
		s = m.consume(s)
	}
	if !m.windowDone(&s) {
		t.Fatal("window not done after its last transaction")
	}
	s = m.release(s)
	if s.Cap.Out.Val != (model.Store{1, 0}) || s.Cap.Out.Tag[0] != 3 || !s.Cap.UnitClosed(0) {
		t.Fatalf("replay %+v", s.Cap.Out)
	}
}

// Encode and Decode are inverses on every state of a small run, and Decode
// refuses short input.
func TestReadonlyEncodeDecode(t *testing.T) {
	for _, f := range []Fault{None, SplitTransaction, InteriorExecutedSet} {
		m := newReadonlyModel(Config{Keys: 2, Values: 2, Events: 3, Chunks: 2, Txn: 2, Fault: f})
		n := 0
		var walk func(s readonlyState, depth int)
		walk = func(s readonlyState, depth int) {
			enc := m.Encode(s, nil)
			d, err := m.Decode(enc)
			if err != nil || d != s {
				t.Fatalf("round trip of %+v: %+v, %v", s, d, err)
			}
			if _, err := m.Decode(enc[:len(enc)-1]); err == nil {
				t.Fatal("short encoding accepted")
			}
			n++
			if depth == 0 {
				return
			}
			for _, a := range m.Actions(s, nil) {
				t2, _ := m.Next(s, a)
				walk(t2, depth-1)
			}
		}
		walk(m.Init()[0], 7)
		if n < 100 {
			t.Fatalf("%v: only %d states walked", f, n)
		}
	}
}

// ---- an independent enumerator for readonly (§7.4, A-discard) ----

type brState struct {
	log     []bfcEvent
	lo, hi  []int
	read    [][]int // per chunk started, per key: value read (-1 not read)
	readAt  []int
	pos     int
	outVal  []int
	outTag  []int
	closed  int
	phase   int // 0 idle, 1 reading, 2 high sampled
	buf     []bool
	started int
}

func (s brState) key() string {
	return fmt.Sprint(s.log, s.lo, s.hi, s.read, s.readAt, s.pos, s.outVal, s.outTag, s.closed, s.phase, s.buf, s.started)
}

func (s brState) clone() brState {
	t := s
	t.log = slices.Clone(s.log)
	t.lo, t.hi = slices.Clone(s.lo), slices.Clone(s.hi)
	t.read = make([][]int, len(s.read))
	for i := range s.read {
		t.read[i] = slices.Clone(s.read[i])
	}
	t.readAt = slices.Clone(s.readAt)
	t.outVal, t.outTag = slices.Clone(s.outVal), slices.Clone(s.outTag)
	t.buf = slices.Clone(s.buf)
	return t
}

// brExecuted reports whether transaction label x has a row among the first n
// entries of the log: x ∈ G(n).
func brExecuted(log []bfcEvent, n, x int) bool {
	for _, e := range log[:n] {
		if e.txn == x {
			return true
		}
	}
	return false
}

// bfReadonly enumerates the read-only capture: the source commits at any
// time; the capture samples G at the log end, reads the chunk's keys one by
// one, samples G again; the consumer walks the log, judging window membership
// by label, and releases the buffer once every row of the high set is
// processed.
func bfReadonly(cfg Config) bfWD {
	K, C := cfg.Keys, cfg.Chunks
	init := brState{readAt: make([]int, K), outVal: make([]int, K), outTag: make([]int, K), buf: make([]bool, K)}
	return bfSearch(init, func(s brState) []brState {
		var out []brState
		for _, rows := range bfTxns(s.log, K, cfg.Values, min(cfg.Txn, cfg.Events-bfRows(s.log))) {
			t := s.clone()
			t.log = bfCommit(t.log, rows)
			out = append(out, t)
		}
		i := s.started - 1
		switch {
		case s.phase == 0 && s.started < C:
			t := s.clone()
			t.lo, t.hi = append(t.lo, len(t.log)), append(t.hi, 0)
			t.read = append(t.read, slices.Repeat([]int{-1}, K))
			t.started++
			t.phase = 1
			out = append(out, t)
		case s.phase == 1:
			t := s.clone()
			a, b := bfDomain(i, K, C)
			k := a
			for k < b && t.read[i][k] >= 0 {
				k++
			}
			if k < b {
				t.read[i][k] = bfSigma(t.log, len(t.log), k)
				t.readAt[k] = len(t.log)
				t.buf[k] = t.read[i][k] > 0
			} else {
				t.hi[i] = len(t.log)
				t.phase = 2
			}
			out = append(out, t)
		}
		done := s.phase == 2
		for p := s.pos; done && p < len(s.log); p++ {
			done = !brExecuted(s.log, s.hi[i], s.log[p].txn)
		}
		switch {
		case done:
			t := s.clone()
			for k := range t.buf {
				if t.buf[k] {
					t.outVal[k], t.outTag[k] = t.read[i][k], t.hi[i]
					t.buf[k] = false
				}
			}
			t.closed++
			t.phase = 0
			out = append(out, t)
		case s.pos < len(s.log):
			t := s.clone()
			e := t.log[t.pos]
			t.pos++
			if t.phase != 0 && !brExecuted(t.log, t.lo[i], e.txn) && (t.phase == 1 || brExecuted(t.log, t.hi[i], e.txn)) {
				t.buf[e.key] = false // in the window: the log wins
			}
			t.outVal[e.key], t.outTag[e.key] = e.val, t.pos
			out = append(out, t)
		}
		return out
	})
}
