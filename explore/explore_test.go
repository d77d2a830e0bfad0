package explore

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func run[S, A any](t *testing.T, m Machine[S, A], opts Options) *Result[S, A] {
	t.Helper()
	r, err := Run(context.Background(), m, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return r
}

func mustPass[S, A any](t *testing.T, r *Result[S, A]) {
	t.Helper()
	if r.Verdict != Pass {
		t.Fatalf("verdict = %v, want pass (violation %+v)", r.Verdict, r.Violation)
	}
}

func mustViolate[S, A any](t *testing.T, r *Result[S, A], property string, want []S) {
	t.Helper()
	if r.Verdict != Violated || r.Violation == nil {
		t.Fatalf("verdict = %v, want violated", r.Verdict)
	}
	if r.Violation.Property != property {
		t.Fatalf("violated %q, want %q", r.Violation.Property, property)
	}
	var got []S
	for _, st := range r.Violation.Trace {
		got = append(got, st.State)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("trace states\n got %v\nwant %v", got, want)
	}
}

func checkStats(t *testing.T, got Stats, generated, distinct uint64, depth int, peak uint64) {
	t.Helper()
	if got.Generated != generated || got.Distinct != distinct || got.Depth != depth || got.QueuePeak != peak {
		t.Fatalf("stats: generated %d distinct %d depth %d peak %d; want %d %d %d %d",
			got.Generated, got.Distinct, got.Depth, got.QueuePeak, generated, distinct, depth, peak)
	}
}

// The Die Hard puzzle: with a 3- and a 5-gallon jug, measure 4 gallons.
// Breadth first, with actions in the order fill small, fill big, empty
// small, empty big, pour small→big, pour big→small, the levels are
//
//	0: (0,0)
//	1: (3,0) (0,5)
//	2: (3,5) (0,3) (3,2)
//	3: (3,3) (0,2)
//	4: (1,5) (2,0)
//	5: (1,0) (2,5)
//	6: (0,1) (3,4)
//
// so the shortest way to 4 gallons takes 6 actions, through the second
// state of level 1. Expanding levels 0 to 5 generates 2+6+10+8+8+8 = 42
// successors (no-op pours and fills are not steps), and the seen-set then
// holds levels 0 to 5: 12 states.
func TestDieHard(t *testing.T) {
	for _, w := range []int{1, 2} {
		r := run(t, Model[jugState, jugAction](jugs{always: true}), Options{Workers: w})
		mustViolate(t, r, "big-not-4", []jugState{{0, 0}, {0, 5}, {3, 2}, {0, 2}, {2, 0}, {2, 5}, {3, 4}})
		var acts []jugAction
		for _, st := range r.Violation.Trace[1:] {
			acts = append(acts, st.Action)
		}
		if want := []jugAction{fillBig, pourBigSmall, emptySmall, pourBigSmall, fillBig, pourBigSmall}; !reflect.DeepEqual(acts, want) {
			t.Fatalf("actions %v, want %v", acts, want)
		}
		if r.Violation.Trace[0].HasAction || !r.Violation.Trace[1].HasAction {
			t.Fatal("HasAction wrong")
		}
		checkStats(t, r.Stats, 42, 12, 6, 3)
	}
}

// Without the property the whole graph is explored. A state is reachable
// exactly when one jug is empty or full: 2·6 states with the small jug at
// 0 or 3, plus 2·2 with it at 1 or 2 and the big one at 0 or 5, 16 in all
// out of 4·6. The brute-force search agrees, and gives the step count.
func TestDieHardGraph(t *testing.T) {
	m := Model[jugState, jugAction](jugs{})
	b := bruteBFS(m)
	if b.distinct != 16 {
		t.Fatalf("brute force found %d states, want 16", b.distinct)
	}
	reachable := 0
	for s := 0; s <= 3; s++ {
		for g := 0; g <= 5; g++ {
			if s == 0 || s == 3 || g == 0 || g == 5 {
				reachable++
			}
		}
	}
	if reachable != 16 {
		t.Fatalf("closed form gives %d, want 16", reachable)
	}
	r := run(t, m, Options{Workers: 2})
	mustPass(t, r)
	checkStats(t, r.Stats, uint64(b.generated), 16, len(b.levels)-1, 3)
}

// k counters 0..n-1 with an increment each: n^k states, depth k(n-1), and
// each counter can be incremented in the n^(k-1)·(n-1) states where it is
// below n-1, so k·n^(k-1)·(n-1) steps. The all-max state is done.
func TestCounters(t *testing.T) {
	tests := []struct{ k, n int }{{3, 1}, {3, 2}, {3, 5}, {3, 10}, {2, 40}}
	for _, tt := range tests {
		m := counters{k: tt.k, n: tt.n}
		states, steps := uint64(1), uint64(tt.k*(tt.n-1))
		for range tt.k {
			states *= uint64(tt.n)
		}
		steps *= states / uint64(tt.n)
		b := bruteBFS(Model[uint64, int](m))
		peak := 0
		for _, l := range b.levels {
			peak = max(peak, l)
		}
		if uint64(b.distinct) != states || uint64(b.generated) != steps {
			t.Fatalf("k=%d n=%d: brute force %d states %d steps, closed form %d %d", tt.k, tt.n, b.distinct, b.generated, states, steps)
		}
		for _, w := range []int{1, 3} {
			r := run(t, Model[uint64, int](m), Options{Workers: w})
			mustPass(t, r)
			checkStats(t, r.Stats, steps, states, tt.k*(tt.n-1), uint64(peak))
			for _, c := range r.Coverage {
				if c.Count != steps/uint64(tt.k) {
					t.Fatalf("coverage %v, want %d each", r.Coverage, steps/uint64(tt.k))
				}
			}
		}
	}
}

// A chain 0 → … → 5 stops at 5: a deadlock at depth 5, after 5 steps, with
// all 6 states seen. A Doner that accepts 5, or NoDeadlock, makes it pass.
func TestDeadlock(t *testing.T) {
	r := run(t, Model[int, int](chain{n: 5}), Options{})
	mustViolate(t, r, "deadlock", []int{0, 1, 2, 3, 4, 5})
	if r.Violation.Reason != "no action is enabled and the state is not done" {
		t.Fatalf("reason %q", r.Violation.Reason)
	}
	checkStats(t, r.Stats, 5, 6, 5, 1)

	r = run(t, Model[int, int](chain{n: 5, noop: true}), Options{})
	mustViolate(t, r, "deadlock", []int{0, 1, 2, 3, 4, 5})
	if !strings.HasPrefix(r.Violation.Reason, "none of the 1 enabled actions") {
		t.Fatalf("reason %q", r.Violation.Reason)
	}

	r = run(t, Model[int, int](doneChain{chain{n: 5}}), Options{})
	mustPass(t, r)
	checkStats(t, r.Stats, 5, 6, 5, 1)

	r = run(t, Model[int, int](chain{n: 5}), Options{NoDeadlock: true})
	mustPass(t, r)
	checkStats(t, r.Stats, 5, 6, 5, 1)
}

// In 3 counters 0..3, (2,2,2) needs 6 increments: reached first at depth 6.
// No counter ever exceeds 3.
func TestSometimes(t *testing.T) {
	m := counters{k: 3, n: 4, props: []Property[uint64, int]{
		{Name: "all-two", Cite: "§1", Kind: Sometimes, Check: func(s *uint64) string {
			if *s == 0x020202 {
				return "all at 2"
			}
			return ""
		}},
		{Name: "overflow", Kind: Sometimes, Check: func(s *uint64) string {
			if *s&0x0c0c0c != 0 {
				return "above 3"
			}
			return ""
		}},
	}}
	r := run(t, Model[uint64, int](m), Options{Workers: 2})
	mustPass(t, r)
	want := []Reach{{Name: "all-two", Cite: "§1", Reached: true, Depth: 6}, {Name: "overflow"}}
	if !reflect.DeepEqual(r.Sometimes, want) {
		t.Fatalf("sometimes %+v, want %+v", r.Sometimes, want)
	}
}

// A Sometimes property holding initially is reached at depth 0.
func TestSometimesInitial(t *testing.T) {
	m := counters{k: 1, n: 3, props: []Property[uint64, int]{
		{Name: "zero", Kind: Sometimes, Check: func(s *uint64) string {
			if *s == 0 {
				return "zero"
			}
			return ""
		}},
	}}
	r := run(t, Model[uint64, int](m), Options{})
	if want := []Reach{{Name: "zero", Reached: true}}; !reflect.DeepEqual(r.Sometimes, want) {
		t.Fatalf("sometimes %+v, want %+v", r.Sometimes, want)
	}
}

// Counting modulo 5, the step 4 → 0 goes back to the initial state, which
// is not new; the transition property is still checked on it. Levels 0..4
// hold one state each and each generates one successor.
func TestTransitionToSeenState(t *testing.T) {
	r := run(t, Model[int, int](ring{n: 5}), Options{Workers: 2})
	mustViolate(t, r, "tick-increases", []int{0, 1, 2, 3, 4, 0})
	v := r.Violation
	if v.Kind != Transition || v.Reason != "tick went from 4 to 0" {
		t.Fatalf("violation %+v", v)
	}
	checkStats(t, r.Stats, 5, 5, 5, 1)
}

// An Always property failing initially gives a one-state trace.
func TestInitialViolation(t *testing.T) {
	r := run(t, Model[rotorState, int](rotor{n: 4, bad: 0}), Options{})
	mustViolate(t, r, "sum-not-bad", []rotorState{{}})
	checkStats(t, r.Stats, 0, 1, 0, 1)
}

// Stopping at depth 3 in 3 counters 0..9: the states with sum ≤ 3 are
// 1+3+6+10 = 20, and levels 0..2 (10 states, no counter at its maximum)
// generate 3 steps each.
func TestMaxDepth(t *testing.T) {
	r := run(t, Model[uint64, int](counters{k: 3, n: 10}), Options{MaxDepth: 3})
	if r.Verdict != Incomplete {
		t.Fatalf("verdict %v", r.Verdict)
	}
	checkStats(t, r.Stats, 30, 20, 3, 10)
}

func rotorSize() (n, bad int) {
	if raceEnabled {
		return 20, 30
	}
	return 64, 100
}

func zeroTimes[S, A any](r *Result[S, A]) Result[S, A] {
	c := *r
	c.Stats.Elapsed = 0
	c.Stats.OnDisk = false
	c.Stats.MemPeak, c.Stats.BytesPerState = 0, 0 // measures of the process
	return c
}

// firstViolation is the trace single-threaded FIFO BFS finds: states are
// checked when first discovered, so the first failure is the shallowest,
// and among those the first discovered, which is what the engine's
// smallest-key rule picks.
func firstViolation(m rotor) []rotorState {
	type node struct {
		s      rotorState
		parent int
	}
	nodes := []node{{parent: -1}}
	seen := map[rotorState]bool{{}: true}
	for i := 0; i < len(nodes); i++ {
		s := nodes[i].s
		for _, a := range m.Actions(&s, nil) {
			u := s
			ok := m.Next(&s, a, &u)
			if !ok || seen[u] {
				continue
			}
			seen[u] = true
			nodes = append(nodes, node{u, i})
			if m.sum(&u) == m.bad {
				var path []rotorState
				for j := len(nodes) - 1; j >= 0; j = nodes[j].parent {
					path = append([]rotorState{nodes[j].s}, path...)
				}
				return path
			}
		}
	}
	return nil
}

// The result does not depend on the number of workers or on where the
// seen-set and queue live. The rotor has n³ states; with bad set, about
// (bad+1)(bad+2)/2 states at depth bad violate at once, so only the
// smallest-key rule makes the trace unique.
func TestDeterminism(t *testing.T) {
	n, bad := rotorSize()
	budget := int64(64<<10 + n*n*n*4) // spills partway through
	// A small budget with ForceDisk: the cache in front of the store (a
	// quarter of the budget) is written out several times.
	diskBudget := max(256<<10, int64(n*n*n*8))
	configs := []struct {
		name string
		opts Options
		disk bool
	}{
		{"w1", Options{Workers: 1}, false},
		{"w2", Options{Workers: 2}, false},
		{"w8", Options{Workers: 8}, false},
		{"disk", Options{Workers: 2, ForceDisk: true}, true},
		{"disk-small", Options{Workers: 2, ForceDisk: true, MemBudget: diskBudget}, true},
		{"budget", Options{Workers: 3, MemBudget: budget}, true},
	}
	for _, b := range []int{-1, bad} {
		m := rotor{n: n, bad: b}
		var want Result[rotorState, int]
		for i, c := range configs {
			r := run(t, Model[rotorState, int](m), c.opts)
			if r.Stats.OnDisk != c.disk {
				t.Fatalf("%s: OnDisk = %v", c.name, r.Stats.OnDisk)
			}
			got := zeroTimes(r)
			if i == 0 {
				want = got
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("bad=%d: %s differs from w1:\n got %+v\nwant %+v", b, c.name, got, want)
			}
		}
		if b < 0 {
			mustPass(t, &want)
			br := bruteBFS(Model[rotorState, int](m))
			if want.Stats.Distinct != uint64(n*n*n) || br.distinct != n*n*n || want.Stats.Generated != uint64(br.generated) {
				t.Fatalf("distinct %d generated %d; brute force %d %d", want.Stats.Distinct, want.Stats.Generated, br.distinct, br.generated)
			}
			if want.Stats.Depth != len(br.levels)-1 {
				t.Fatalf("depth %d, brute force %d", want.Stats.Depth, len(br.levels)-1)
			}
		} else {
			mustViolate(t, &want, "sum-not-bad", firstViolation(m))
			if want.Stats.Depth != bad {
				t.Fatalf("depth %d, want %d", want.Stats.Depth, bad)
			}
		}
	}
}

// Cancelling stops promptly with the counts so far, stops every goroutine
// and removes the run's files, for the memory and the disk tier.
func TestCancel(t *testing.T) {
	for _, disk := range []bool{false, true} {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		user := filepath.Join(t.TempDir(), "tier")
		before := runtime.NumGoroutine()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// Cancel once the run is well under way.
		var cancelled atomic.Int64
		opts := Options{Workers: 2, ForceDisk: disk, Progress: 5 * time.Millisecond, OnProgress: func(s Stats) {
			if s.Distinct >= 10000 && cancelled.Load() == 0 {
				cancelled.Store(time.Now().UnixNano())
				cancel()
			}
		}}
		if disk {
			opts.Dir = user
		}
		r, err := Run(ctx, Model[uint64, int](counters{k: 4, n: 64}), opts)
		if err != nil {
			t.Fatal(err)
		}
		latency := time.Duration(time.Now().UnixNano() - cancelled.Load())
		t.Logf("disk=%v: returned %v after cancel, %+v", disk, latency, r.Stats)
		if latency > time.Second {
			t.Errorf("returned %v after cancel", latency)
		}
		if r.Verdict != Incomplete || r.Stats.Distinct == 0 || r.Stats.Generated == 0 {
			t.Fatalf("result %v %+v", r.Verdict, r.Stats)
		}
		for _, dir := range []string{tmp, user} {
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("%s not empty: %v", dir, ents)
			}
		}
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
		}
	}
}

// OnProgress is called from one goroutine at a time.
func TestProgress(t *testing.T) {
	var calls, inside atomic.Int32
	var last Stats
	var mu sync.Mutex
	opts := Options{Workers: 2, Progress: time.Millisecond, OnProgress: func(s Stats) {
		if inside.Add(1) != 1 {
			t.Error("OnProgress called concurrently")
		}
		calls.Add(1)
		mu.Lock()
		last = s
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		inside.Add(-1)
	}}
	r := run(t, Model[uint64, int](counters{k: 3, n: 60}), opts)
	mustPass(t, r)
	if calls.Load() == 0 {
		t.Fatal("OnProgress never called")
	}
	mu.Lock()
	defer mu.Unlock()
	if last.Distinct > r.Stats.Distinct || last.Generated > r.Stats.Generated {
		t.Fatalf("progress %+v beyond the result %+v", last, r.Stats)
	}
}

func TestErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), Model[int, int](chain{n: 3}), Options{Dir: file, ForceDisk: true}); err == nil {
		t.Fatal("a file as Dir: no error")
	}
	if _, err := Run(context.Background(), Model[int, int](badDecode{chain{n: 3}}), Options{}); err == nil || !strings.Contains(err.Error(), "cannot decode") {
		t.Fatalf("Decode failure: error %v", err)
	}
}

// A user directory is kept, and so is nothing inside it.
func TestUserDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tier")
	r := run(t, Model[uint64, int](counters{k: 3, n: 10}), Options{Dir: dir, ForceDisk: true})
	mustPass(t, r)
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 0 {
		t.Fatalf("dir: %v %v", ents, err)
	}
}

const dieHardText = `step 0: initial state
  small: 0
  big: 0
step 1: fill big
  big: 0 → 5
step 2: pour big into small
  small: 0 → 3
  big: 5 → 2
step 3: empty small
  small: 3 → 0
step 4: pour big into small
  small: 0 → 2
  big: 2 → 0
step 5: fill big
  big: 0 → 5
step 6: pour big into small
  small: 2 → 3
  big: 5 → 4
violated: big-not-4 (always, Die Hard 3)
  big jug holds 4 gallons
`

func TestReport(t *testing.T) {
	m := Model[jugState, jugAction](jugs{always: true})
	rep := NewReport(m, run(t, m, Options{}))
	if got := rep.Violation.Text(false); got != dieHardText {
		t.Fatalf("Text(false):\n%s\nwant:\n%s", got, dieHardText)
	}
	full := rep.Violation.Text(true)
	if !strings.Contains(full, "step 1: fill big\n  small: 0\n  big: 0 → 5\n") {
		t.Fatalf("Text(true):\n%s", full)
	}
	sum := rep.Summary()
	for _, want := range []string{"verdict:     violated\n", "generated:   42\n", "distinct:    12\n", "depth:       6\n", "queue peak:  3\n",
		"  fill small           8\n", "  pour small into big  "} {
		if !strings.Contains(sum, want) {
			t.Fatalf("summary lacks %q:\n%s", want, sum)
		}
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"verdict":"violated"`, `"queue_peak":3`, `"steps":[{"action":"","fields":[{"name":"small","value":"0"}`, `"kind":"always"`} {
		if !strings.Contains(string(js), want) {
			t.Fatalf("JSON lacks %s:\n%s", want, js)
		}
	}
	var back Report
	if err := json.Unmarshal(js, &back); err != nil || back.VerdictName != "violated" || back.Violation.Text(false) != dieHardText {
		t.Fatalf("round trip: %v %+v", err, back)
	}
}

func TestSummaryNeverEnabled(t *testing.T) {
	m := Model[rotorState, int](rotor{n: 1, bad: -1})
	sum := NewReport(m, run(t, m, Options{})).Summary()
	for _, want := range []string{"  inc c0  never enabled\n", "  all-equal-mid: reached at depth 0\n"} {
		if !strings.Contains(sum, want) {
			t.Fatalf("summary lacks %q:\n%s", want, sum)
		}
	}
}

// Options.Only checks just the named Always and Transition properties;
// Sometimes properties are still reported. The rotor with bad=6 fails
// "sum-not-bad" at depth 6 when it is checked, and passes when only
// "inc-adds-one" is.
func TestOnly(t *testing.T) {
	m := Model[rotorState, int](rotor{n: 4, bad: 6})
	r := run(t, m, Options{Only: []string{"sum-not-bad"}})
	if r.Verdict != Violated || r.Violation.Property != "sum-not-bad" || r.Stats.Depth != 6 {
		t.Fatalf("only sum-not-bad: %v %+v", r.Verdict, r.Violation)
	}
	r = run(t, m, Options{Only: []string{"inc-adds-one"}})
	mustPass(t, r)
	if len(r.Sometimes) != 1 || !r.Sometimes[0].Reached {
		t.Fatalf("sometimes %+v", r.Sometimes)
	}
	if _, err := Run(context.Background(), m, Options{Only: []string{"no-such"}}); err == nil {
		t.Fatal("unknown property: no error")
	}
}
