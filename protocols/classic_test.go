package protocols

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
)

// ---- helpers shared by the classic and readonly tests ----

// wdRun explores m with the given number of workers.
func wdRun[S, A any](t *testing.T, m explore.Model[S, A], workers int) *explore.Result[S, A] {
	t.Helper()
	r, err := explore.Run(context.Background(), m, explore.Options{Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// wdOnly is a model with its properties cut down to the named ones, so a
// fault's shortest trace to one invariant is found even where another
// invariant fails earlier on the way.
type wdOnly[S, A any] struct {
	explore.Model[S, A]
	names []string
}

func (o wdOnly[S, A]) Properties() []explore.Property[S, A] {
	var out []explore.Property[S, A]
	for _, p := range o.Model.Properties() {
		if slices.Contains(o.names, p.Name) {
			out = append(out, p)
		}
	}
	return out
}

func (o wdOnly[S, A]) Done(s *S) bool { return o.Model.(explore.Doner[S]).Done(s) }

// wdTrace renders a violation: one line per step, then the last state.
func wdTrace[S, A any](m explore.Model[S, A], v *explore.Violation[S, A]) string {
	if v == nil {
		return "(no violation)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", v.Property, v.Reason)
	b.WriteString(strings.Join(wdSteps(m, v), "\n"))
	last := v.Trace[len(v.Trace)-1].State
	for _, f := range any(m).(explore.Fielder[S]).Fields(&last) {
		fmt.Fprintf(&b, "\n    %s: %s", f.Name, f.Value)
	}
	return b.String()
}

// wdSteps is the trace's steps in the model's words.
func wdSteps[S, A any](m explore.Model[S, A], v *explore.Violation[S, A]) []string {
	var out []string
	for i := 1; i < len(v.Trace); i++ {
		out = append(out, fmt.Sprintf("%d. %s", i, m.Describe(&v.Trace[i-1].State, v.Trace[i].Action)))
	}
	return out
}

// wdReached fails the test for every Sometimes property not reached.
func wdReached[S, A any](t *testing.T, r *explore.Result[S, A]) {
	t.Helper()
	if len(r.Sometimes) == 0 {
		t.Fatal("no sometimes properties")
	}
	for _, s := range r.Sometimes {
		if !s.Reached {
			t.Errorf("%s (%s) not reached", s.Name, s.Cite)
		} else {
			t.Logf("%s reached at depth %d", s.Name, s.Depth)
		}
	}
}

// wdSmall reports whether the tests should use their smallest bounds.
func wdSmall() bool { return testing.Short() || classicRace }

// ---- classic ----

func newClassicModel(cfg Config) *classic { return newClassic(cfg).(*classic) }

// Reference: §7.2, Thm 2, Thm 3 — every invariant holds on the published loop,
// and the counts do not depend on the number of workers.
func TestClassicPasses(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		slow bool
	}{
		{"1 key", Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, false},
		{"2 keys 2 chunks", Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1}, false},
		{"2 keys txn 2", Config{Keys: 2, Values: 2, Events: 3, Chunks: 1, Txn: 2}, false},
		{"3 keys 3 events", Config{Keys: 3, Values: 2, Events: 3, Chunks: 2, Txn: 2}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.slow && wdSmall() {
				t.Skip("short or race build")
			}
			m := newClassic(tt.cfg)
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

// Reference: §7.2, Def. 6.2 — exact counts, from an enumerator written from
// the paper's description (bfClassic below: its own states, a Go map as the
// seen set, no engine and no fingerprints).
//
// By hand, at 1 key / 1 value / 1 event / 1 chunk the source commits x =
// k0 := 1 once, at some point of the loop L (low), R (read), H (high):
//   - before L: {} ; [x] ; [x] consumed to 1                          3 states
//   - L written: [x L] consumed to 0 or 1; [L]; [L x]                  4 states
//   - chunk read: [x L] read 1, consumed 0 or 1; [L x] read 1;
//     [L] read ⊥; [L x] read ⊥                                         5 states
//   - H written, the consumer walks on: [x L H] consumed 0..3; [L x H]
//     read 1, 0..3; [L H] 0..2; [L H x] 0..3; [L x H] read ⊥, 0..3    19 states
//
// 31 states consumed from s0 = 0. The consumer may also start at s0 = 1 when
// x precedes L (it never sees x; only the read carries it): [x] and [x L]
// with s0 = 1; [x L] read 1 with s0 = 1; [x L H] read 1 consumed 1..3 with
// s0 = 1 — 6 more, 37 (40 generated). It may also start at L itself once H
// is written (the capture handles its own L, the window opens): [L H]
// consumed 1..2, [L H x] 1..3, [L x H] read ⊥ and read 1 1..3 each, all
// with s0 = 1, and [x L H] consumed 2..3 with s0 = 2 — 13 more, 50 in all,
// 55 generated (the enumerator); the deepest is still 7 steps. With no-op
// writes x may also be k0 := ⊥ (a delete of the absent key): 50 states
// each, less the 8 without x ({}, [L], [L] read ⊥, [L H] from s0 = 0 and
// s0 = 1), 92 in all. With a whole-server log x may instead be k1 := 1, on
// a key outside the scope, which the consumer skips: again 50 states each,
// less the same 8, 92.
func TestClassicCounts(t *testing.T) {
	tests := []struct {
		cfg                       Config
		distinct, generated, deep int
	}{
		{Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, 50, 55, 7},
		{Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1}, 8638, 10125, 14},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 2}, 756, 933, 9},
		{Config{Keys: 2, Values: 1, Events: 1, Chunks: 2, Txn: 1, InitialAny: true}, 1056, 1148, 12},
		// No-op writes: an update to the current value, a delete of an absent key.
		{Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, NoOps: true}, 92, 103, 7},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 2, InitialAny: true, NoOps: true}, 11328, 14076, 9},
		// A whole-server log: the source also writes key K, which the consumer skips.
		{Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, WholeServer: true}, 92, 103, 7},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 2, InitialAny: true, WholeServer: true}, 23676, 27464, 14},
	}
	for _, tt := range tests {
		t.Run(tt.cfg.String(), func(t *testing.T) {
			bf := bfClassic(tt.cfg)
			if bf.distinct != tt.distinct || bf.generated != tt.generated || bf.depth != tt.deep {
				t.Errorf("enumerator: %d distinct, %d generated, depth %d; want %d, %d, %d",
					bf.distinct, bf.generated, bf.depth, tt.distinct, tt.generated, tt.deep)
			}
			r := wdRun(t, newClassic(tt.cfg), 2)
			if r.Verdict != explore.Pass || r.Stats.Distinct != uint64(bf.distinct) || r.Stats.Generated != uint64(bf.generated) || r.Stats.Depth != bf.depth {
				t.Errorf("engine: %v %+v; enumerator %d distinct, %d generated, depth %d",
					r.Verdict, r.Stats, bf.distinct, bf.generated, bf.depth)
			}
		})
	}
}

// Reference: §6.2, Example 4.1, §1.2 — the invariants bite on real races:
// every Sometimes property is reached.
func TestClassicSometimes(t *testing.T) {
	cfg := Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1}
	r := wdRun(t, newClassic(cfg), 2)
	if r.Verdict != explore.Pass {
		t.Fatalf("%v", r.Verdict)
	}
	wdReached(t, r)
}

// classicFaultCfg is the bound the fault tests run at.
var classicFaultCfg = Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1}

// Reference: §2.3, §6.2, §9.1, O1, S-OBS — each fault is killed. first is the
// invariant the full model reports (with its shortest trace); breaks is the
// invariant the fault is meant to break, checked alone, with the length of
// its own shortest trace.
func TestClassicFaults(t *testing.T) {
	tests := []struct {
		fault       Fault
		first       string
		firstSteps  int
		breaks      string
		breaksSteps int
	}{
		{NoDiscard, "closed-unit-cut", 9, "frontier-replay", 14},
		{EarlyRelease, "closed-unit-cut", 4, "closed-unit-cut", 4},
		{LowEdgeOffByOne, "closed-unit-cut", 9, "frontier-replay", 14},
		{HighEdgeOffByOne, "closed-unit-cut", 9, "frontier-replay", 14},
		{ScanSkipsRow, "contract", 7, "contract", 7},
		{OverlappingChunks, "contract", 6, "contract", 6},
		{LateStart, "closed-unit-cut", 7, "frontier-replay", 12},
		{CopyDropped, "closed-unit-cut", 7, "frontier-replay", 12},
		{LostWatermark, "deadlock", 9, "deadlock", 9},
	}
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			cfg := classicFaultCfg
			cfg.Fault = tt.fault
			m := newClassic(cfg)
			r := wdRun(t, m, 2)
			if r.Verdict != explore.Violated || r.Violation.Property != tt.first || len(r.Violation.Trace)-1 != tt.firstSteps {
				t.Errorf("full model: want %s in %d steps, got %v\n%s", tt.first, tt.firstSteps, r.Verdict, wdTrace(m, r.Violation))
			}
			only := wdOnly[classicState, classicAction]{m, []string{tt.breaks}}
			r = wdRun(t, only, 2)
			if r.Verdict != explore.Violated || r.Violation.Property != tt.breaks || len(r.Violation.Trace)-1 != tt.breaksSteps {
				t.Errorf("%s alone: want a violation in %d steps, got %v\n%s", tt.breaks, tt.breaksSteps, r.Verdict, wdTrace(m, r.Violation))
			}
			t.Logf("%s: %s", tt.fault, wdTrace(m, r.Violation))
		})
	}
}

// Reference: §9.1, §3.3 (O2 with O3), S-OBS — a scan that skips a present
// row is caught by frontier replay even over an empty base store: the
// consumer may start after the row's insert, so only the copy could carry it.
func TestClassicScanSkipsRowCaughtByReplay(t *testing.T) {
	cfg := classicFaultCfg
	cfg.Fault = ScanSkipsRow
	m := newClassic(cfg)
	r := wdRun(t, wdOnly[classicState, classicAction]{m, []string{invariants.FrontierReplay.Name}}, 2)
	if r.Verdict != explore.Violated {
		t.Fatalf("%v: frontier replay survives a skipped row", r.Verdict)
	}
	steps := strings.Join(wdSteps(m, r.Violation), "\n")
	if !strings.Contains(steps, "skipping its first present row") || !strings.Contains(steps, "consumer's start moves past") {
		t.Errorf("want a skipped row the consumer never sees in the log:\n%s", steps)
	}
}

// Reference: §7.3 W3 — a filtered watermark: the window never opens, the
// chunk never closes, and the run ends in a state that is not done.
func TestClassicLostWatermarkTrace(t *testing.T) {
	cfg := Config{Keys: 1, Values: 1, Events: 0, Chunks: 1, Txn: 1, Fault: LostWatermark}
	m := newClassic(cfg)
	r := wdRun(t, m, 1)
	want := []string{
		"1. write low watermark for chunk 1 at position 1",
		"2. read chunk 1 at position 1: k0=⊥",
		"3. write high watermark for chunk 1 at position 2",
		"4. consume position 1: L1 filtered out of the consumed log (never seen)",
		"5. consume position 2: H1 filtered out of the consumed log (never seen)",
	}
	if r.Violation == nil || r.Violation.Property != "deadlock" || !slices.Equal(wdSteps(m, r.Violation), want) {
		t.Fatalf("got\n%s\nwant deadlock after\n%s", wdTrace(m, r.Violation), strings.Join(want, "\n"))
	}
}

// Reference: Def. 6.2, Lemma 6.1 — the early-release trace, step by step: the
// survivors go out when the high watermark is written, before the consumer
// has seen the insert inside the window.
func TestClassicEarlyReleaseTrace(t *testing.T) {
	cfg := classicFaultCfg
	cfg.Fault = EarlyRelease
	m := newClassic(cfg)
	r := wdRun(t, m, 1)
	want := []string{
		"1. write low watermark for chunk 1 at position 1",
		"2. read chunk 1 at position 1: k0=⊥",
		"3. source commits k0 := 1 at position 2",
		"4. write high watermark for chunk 1 at position 3, release chunk: emit nothing",
	}
	if r.Violation == nil || !slices.Equal(wdSteps(m, r.Violation), want) {
		t.Fatalf("got\n%s\nwant\n%s", wdTrace(m, r.Violation), strings.Join(want, "\n"))
	}
}

// Reference: §7.2 — the read is one select at one position: every key of a
// chunk carries the same latent read position, inside the bracket.
func TestClassicSingleReadPoint(t *testing.T) {
	m := newClassicModel(Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 1})
	s := m.Init()[0]
	m.commit(&s, Txn{N: 1, Ev: [MaxTxn]model.Event{{Key: 1, Img: 2}}})
	m.writeLow(&s)
	m.commit(&s, Txn{N: 1, Ev: [MaxTxn]model.Event{{Key: 0, Img: 1}}})
	m.readChunk(&s)
	m.writeHigh(&s)
	for s.Cap.Pos < s.Cap.Log.Len() {
		m.consume(&s)
	}
	u := s.Cap.Plan.Units[0]
	if s.Cap.ReadAt[0] != 3 || s.Cap.ReadAt[1] != 3 || u.Lo != 2 || u.Hi != 4 || !s.Cap.UnitClosed(0) {
		t.Fatalf("reads at %d, %d; bracket (%d, %d]; closed %v", s.Cap.ReadAt[0], s.Cap.ReadAt[1], u.Lo, u.Hi, s.Cap.UnitClosed(0))
	}
	if u.Refresh[0] != 1 || u.Refresh[1] != 2 {
		t.Fatalf("refresh %v", u.Refresh)
	}
	if r := invariants.CheckSingleReadPoint(&s.Cap); r != "" {
		t.Fatal(r)
	}
	// k1 survives (its only event precedes the bracket); k0's in-window
	// insert discarded its buffered row and was emitted at position 3.
	if s.Cap.Out.Val[0] != 1 || s.Cap.Out.Tag[0] != 3 || s.Cap.Out.Val[1] != 2 || s.Cap.Out.Tag[1] != 4 {
		t.Fatalf("replay %v", s.Cap.Out)
	}
}

// Encode and Decode are inverses on every state of a small run, and Decode
// refuses short input.
func TestClassicEncodeDecode(t *testing.T) {
	m := newClassicModel(Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1})
	n := 0
	var walk func(s classicState, depth int)
	walk = func(s classicState, depth int) {
		enc := m.Encode(&s, nil)
		var d classicState
		err := m.Decode(enc, &d)
		if err != nil || d != s {
			t.Fatalf("round trip of %+v: %+v, %v", s, d, err)
		}
		if err := m.Decode(enc[:len(enc)-1], new(classicState)); err == nil {
			t.Fatal("short encoding accepted")
		}
		n++
		if depth == 0 {
			return
		}
		for _, a := range m.Actions(&s, nil) {
			t2 := s
			m.Next(&s, a, &t2)
			walk(t2, depth-1)
		}
	}
	walk(m.Init()[0], 8)
	if n < 100 {
		t.Fatalf("only %d states walked", n)
	}
}

// ---- an independent enumerator for classic (§7.2, Def. 6.2) ----

type bfWD struct{ distinct, generated, depth int }

// bfcEvent is a log entry: a row event (key ≥ 0) or a watermark (key < 0,
// chunk and high say which).
type bfcEvent struct {
	key, val, txn int
	chunk         int
	high          bool
}

type bfcState struct {
	log     []bfcEvent
	lo, hi  []int   // per chunk started
	read    [][]int // per chunk started, per key: value read (-1 not read)
	readAt  []int   // per key
	pos     int
	outVal  []int // replay of the emitted stream, per key
	outTag  []int
	closed  int
	phase   int // 0 idle, 1 low written, 2 chunk read, 3 high written
	buf     []bool
	started int
	base    []int // the store before the history
	s0      int   // consumption start: positions 1..s0 are never consumed
}

func (s bfcState) key() string {
	return fmt.Sprint(s.log, s.lo, s.hi, s.read, s.readAt, s.pos, s.outVal, s.outTag, s.closed, s.phase, s.buf, s.started, s.base, s.s0)
}

// sigma is key k's value after the first n log entries, over the base store.
func (s bfcState) sigma(n, k int) int {
	v := s.base[k]
	for _, e := range s.log[:n] {
		if e.key == k {
			v = e.val
		}
	}
	return v
}

func (s bfcState) clone() bfcState {
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

// bfSigma is the value of key k after the first n entries of the log (over
// the empty store; bfcState.sigma adds the base store).
func bfSigma(log []bfcEvent, n, k int) int {
	v := 0
	for _, e := range log[:n] {
		if e.key == k {
			v = e.val
		}
	}
	return v
}

// bfTxns is every transaction the source may commit on top of log: 1..room
// rows on distinct keys in any order, each changing its key's value.
func bfTxns(log []bfcEvent, keys, values, room int) [][]bfcEvent {
	return bfTxnsOf(keys, values, room, func(k int) int { return bfSigma(log, len(log), k) },
		func(k, v int) bfcEvent { return bfcEvent{key: k, val: v} })
}

// bfTxnsOf is every transaction of 1..room rows on distinct keys, in every
// order, each row giving its key a value other than cur(k); row builds a
// row of the enumerator's own type.
func bfTxnsOf[E any](keys, values, room int, cur func(k int) int, row func(k, v int) E) [][]E {
	var out [][]E
	var rec func(t []E, used uint)
	rec = func(t []E, used uint) {
		for k := 0; k < keys; k++ {
			if used&(1<<k) != 0 {
				continue
			}
			for v := 0; v <= values; v++ {
				if v == cur(k) {
					continue
				}
				t2 := append(slices.Clone(t), row(k, v))
				out = append(out, t2)
				if len(t2) < room {
					rec(t2, used|1<<k)
				}
			}
		}
	}
	if room > 0 {
		rec(nil, 0)
	}
	return out
}

// bfStores is every base store over keys and values, or the empty one.
func bfStores(keys, values int, any bool) [][]int {
	out := [][]int{make([]int, keys)}
	if !any {
		return out
	}
	for k := 0; k < keys; k++ {
		var next [][]int
		for _, st := range out {
			for v := 0; v <= values; v++ {
				t := slices.Clone(st)
				t[k] = v
				next = append(next, t)
			}
		}
		out = next
	}
	return out
}

// bfCommit appends a transaction under the next label.
func bfCommit(log []bfcEvent, rows []bfcEvent) []bfcEvent {
	label := 1
	if len(log) > 0 {
		label = log[len(log)-1].txn + 1
	}
	for _, r := range rows {
		r.txn = label
		log = append(log, r)
	}
	return log
}

func bfRows(log []bfcEvent) int {
	n := 0
	for _, e := range log {
		if e.key >= 0 {
			n++
		}
	}
	return n
}

func bfDomain(i, keys, chunks int) (lo, hi int) { return i * keys / chunks, (i + 1) * keys / chunks }

// bfSearch is a plain breadth-first search with a map of state keys.
func bfSearch[S interface{ key() string }](init S, next func(S) []S) bfWD {
	return bfSearchAll([]S{init}, next)
}

// bfSearchAll is bfSearch from several initial states.
func bfSearchAll[S interface{ key() string }](inits []S, next func(S) []S) bfWD {
	var r bfWD
	seen := map[string]bool{}
	var level []S
	for _, s := range inits {
		if k := s.key(); !seen[k] {
			seen[k] = true
			level = append(level, s)
		}
	}
	for {
		var nl []S
		for _, s := range level {
			for _, t := range next(s) {
				r.generated++
				if k := t.key(); !seen[k] {
					seen[k] = true
					nl = append(nl, t)
				}
			}
		}
		if len(nl) == 0 {
			break
		}
		r.depth++
		level = nl
	}
	r.distinct = len(seen)
	return r
}

// bfClassic enumerates the classic loop: the source commits at any time over
// a base store (every one with InitialAny); the capture writes L, reads the
// chunk, writes H; the consumer (paused between L and H) may first give up
// positions before the first L (its start s0), then walks the log, opening
// the window at L, discarding buffered keys on in-window events, emitting
// events in place and survivors at H.
func bfClassic(cfg Config) bfWD {
	K, C := cfg.Keys, cfg.Chunks
	var inits []bfcState
	for _, b := range bfStores(K, cfg.Values, cfg.InitialAny) {
		inits = append(inits, bfcState{readAt: make([]int, K), outVal: make([]int, K), outTag: make([]int, K), buf: make([]bool, K), base: b})
	}
	return bfSearchAll(inits, func(s bfcState) []bfcState {
		var out []bfcState
		cur := make([]bfcEvent, 0, K) // the base store as a pseudo-log, so bfTxns sees current values
		for k, v := range s.base {
			if v != 0 {
				cur = append(cur, bfcEvent{key: k, val: v})
			}
		}
		room := min(cfg.Txn, cfg.Events-bfRows(s.log))
		src := K // the keys the source writes: with a whole-server log key K too (§7.7)
		if cfg.WholeServer {
			src++
		}
		txns := bfTxns(append(cur, s.log...), src, cfg.Values, room)
		if cfg.NoOps { // any value, the current one too (no current value is -1)
			txns = bfTxnsOf(src, cfg.Values, room, func(int) int { return -1 }, func(k, v int) bfcEvent { return bfcEvent{key: k, val: v} })
		}
		for _, rows := range txns {
			t := s.clone()
			t.log = bfCommit(t.log, rows)
			out = append(out, t)
		}
		switch {
		case s.phase == 0 && s.started < C:
			t := s.clone()
			t.log = bfCommit(t.log, []bfcEvent{{key: -1, chunk: s.started}})
			t.lo, t.hi = append(t.lo, len(t.log)), append(t.hi, 0)
			t.read = append(t.read, slices.Repeat([]int{-1}, K))
			t.started++
			t.phase = 1
			out = append(out, t)
		case s.phase == 1:
			t := s.clone()
			i := t.started - 1
			a, b := bfDomain(i, K, C)
			for k := a; k < b; k++ {
				t.read[i][k] = t.sigma(len(t.log), k)
				t.readAt[k] = len(t.log)
			}
			t.phase = 2
			out = append(out, t)
		case s.phase == 2:
			t := s.clone()
			t.log = bfCommit(t.log, []bfcEvent{{key: -1, chunk: s.started - 1, high: true}})
			t.hi[s.started-1] = len(t.log)
			t.phase = 3
			out = append(out, t)
		}
		if s.phase != 1 && s.phase != 2 && s.pos < len(s.log) && s.pos == s.s0 && (s.started == 0 || s.pos+1 <= s.lo[0]) {
			t := s.clone() // the start moves past the next position, up to L itself
			t.pos++
			t.s0++
			if e := t.log[t.pos-1]; e.key < 0 { // a start at L: the capture handles its own marker
				for k := range t.buf {
					t.buf[k] = t.read[e.chunk][k] > 0
				}
			}
			out = append(out, t)
		}
		if s.phase != 1 && s.phase != 2 && s.pos < len(s.log) {
			t := s.clone()
			t.pos++
			e := t.log[t.pos-1]
			i := t.started - 1
			switch {
			case e.key < 0 && !e.high:
				for k := range t.buf {
					t.buf[k] = t.read[e.chunk][k] > 0
				}
			case e.key < 0:
				for k := range t.buf {
					if t.buf[k] {
						t.outVal[k], t.outTag[k] = t.read[e.chunk][k], t.pos
						t.buf[k] = false
					}
				}
				t.closed++
				t.phase = 0
			case e.key >= K: // another table's row: skipped
			default:
				if i >= 0 && t.closed == i && t.pos > t.lo[i] {
					t.buf[e.key] = false // in the window: the log wins
				}
				t.outVal[e.key], t.outTag[e.key] = e.val, t.pos
			}
			out = append(out, t)
		}
		return out
	})
}

// Reference: Thm 3 (a tag is a coordinate), §9 (exactly once), Def. 6.2 —
// each fault is caught by one invariant besides exact-emission (the stream
// is not the window-discard emission in either): begin-tagged-events leaves
// the sink's values and the tags' order right, so only exact-tags sees it;
// a resume that repeats its last event changes nothing an upsert sink can
// see, so only no-duplicate-delivery does. Every other invariant passes.
func TestClassicTagAndDeliveryFaults(t *testing.T) {
	for _, tt := range []struct {
		fault   Fault
		txn     int
		catches string
		steps   int
	}{
		{BeginTaggedEvents, 2, invariants.ExactTags.Name, 3},
		{EventDeliveredTwice, 1, invariants.NoDuplicate.Name, 5},
	} {
		t.Run(tt.fault.String(), func(t *testing.T) {
			cfg := Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: tt.txn, InitialAny: true, Fault: tt.fault, ExactEmission: true}
			m := newClassic(cfg)
			for _, p := range m.Properties() {
				if p.Kind == explore.Sometimes {
					continue
				}
				r, err := explore.Run(context.Background(), m, explore.Options{Workers: 2, Only: []string{p.Name}})
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case p.Name == tt.catches && (r.Verdict != explore.Violated || len(r.Violation.Trace)-1 != tt.steps):
					t.Errorf("%s: want a violation in %d steps, got %v\n%s", p.Name, tt.steps, r.Verdict, wdTrace(m, r.Violation))
				case p.Name == invariants.ExactEmission.Name && r.Verdict != explore.Violated:
					t.Errorf("%s: want a violation, got %v", p.Name, r.Verdict)
				case p.Name != tt.catches && p.Name != invariants.ExactEmission.Name && r.Verdict != explore.Pass:
					t.Errorf("%s: want pass, got %v\n%s", p.Name, r.Verdict, wdTrace(m, r.Violation))
				}
			}
		})
	}
}

// Reference: S-OBS (s0 ⊑ lo_i) — a window that opens only when the consumer
// meets its low watermark loses the chunk's rows only when the consumer
// starts at lo itself: the shortest counterexample starts there, and no
// counterexample starts earlier (a start before lo meets the marker).
func TestClassicStartAtLow(t *testing.T) {
	cfg := Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, InitialAny: true, Fault: MarkerOnlyFromStream}
	m := newClassic(cfg)
	r := wdRun(t, wdOnly[classicState, classicAction]{m, []string{invariants.FrontierReplay.Name}}, 2)
	if r.Verdict != explore.Violated || len(r.Violation.Trace)-1 != 5 {
		t.Fatalf("want frontier-replay in 5 steps, got %v\n%s", r.Verdict, wdTrace(m, r.Violation))
	}
	last := r.Violation.Trace[len(r.Violation.Trace)-1].State.Cap
	if last.Start != last.Plan.Units[0].Lo {
		t.Errorf("counterexample starts at s0 = %d, want lo = %d", last.Start, last.Plan.Units[0].Lo)
	}
	// Every state that breaks frontier replay has s0 = lo.
	for _, s := range wdReachable(m) {
		if invariants.CheckFrontierReplay(&s.Cap, 1) != "" && s.Cap.Start != s.Cap.Plan.Units[0].Lo {
			t.Fatalf("frontier replay fails with s0 = %d, lo = %d", s.Cap.Start, s.Cap.Plan.Units[0].Lo)
		}
	}
}

// wdReachable is every state of m reachable from its initial states.
func wdReachable[S comparable, A any](m explore.Model[S, A]) []S {
	seen := map[S]bool{}
	queue := m.Init()
	var out []S
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
		for _, a := range m.Actions(&s, nil) {
			t := s
			if m.Next(&s, a, &t) {
				queue = append(queue, t)
			}
		}
	}
	return out
}
