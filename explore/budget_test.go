package explore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"strconv"
	"syscall"
	"testing"
)

// subsets is the lattice of subsets of n items, built one item at a time:
// 2ⁿ states, level d holding the C(n, d) subsets of d items. The middle
// levels are wide and each of their states has about n/2 successors, most
// of them shared, so a level's own tables (level map, candidates) are
// large: the model that makes a budgeted run expand levels in passes.
type subsets struct {
	n     int
	props []Property[uint32, int]
}

func (m subsets) Init() []uint32 { return []uint32{0} }
func (m subsets) Actions(s *uint32, buf []int) []int {
	for i := range m.n {
		if *s&(1<<i) == 0 {
			buf = append(buf, i)
		}
	}
	return buf
}
func (m subsets) Next(s *uint32, a int, t *uint32) bool { *t = *s | 1<<a; return true }
func (m subsets) Encode(s *uint32, buf []byte) []byte {
	return binary.LittleEndian.AppendUint32(buf, *s)
}
func (m subsets) Properties() []Property[uint32, int] { return m.props }
func (m subsets) Describe(s *uint32, a int) string    { return fmt.Sprintf("add %d", a) }
func (m subsets) ActionKind(a int) int                { return a }
func (m subsets) Done(s *uint32) bool                 { return *s == 1<<m.n-1 }
func (m subsets) Decode(b []byte, s *uint32) error {
	if len(b) != 4 {
		return errors.New("subsets: bad encoding")
	}
	*s = binary.LittleEndian.Uint32(b)
	return nil
}
func (m subsets) ActionNames() []string {
	names := make([]string, m.n)
	for i := range names {
		names[i] = fmt.Sprintf("add %d", i)
	}
	return names
}

// runEngine runs m and reports the most passes a level took.
func runEngine[S, A any](t *testing.T, m Machine[S, A], opts Options) (*Result[S, A], int) {
	t.Helper()
	res, e := runEngineOf(t, m, opts)
	return res, e.mostPasses
}

// runEngineOf runs m as Run does and returns the engine, closed, for its
// statistics.
func runEngineOf[S, A any](t *testing.T, m Machine[S, A], opts Options) (*Result[S, A], *engine[S, A]) {
	t.Helper()
	e, err := newEngine(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer memoryLimit(opts.MemBudget)()
	res, err := e.run(context.Background())
	if cerr := e.close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return res, e
}

// Reference: issue 10, finding 5. A budget too small for a level's tables
// makes the level run in passes; counts, coverage, reached properties and
// the counterexample are those of a single pass, for any worker count.
func TestPassesMatchOnePass(t *testing.T) {
	n := 16
	if raceEnabled {
		n = 13
	}
	big := Property[uint32, int]{Name: "fewer-than-9", Kind: Always, Check: func(s *uint32) string {
		if bits.OnesCount32(*s) >= n-4 {
			return "too many items"
		}
		return ""
	}}
	half := Property[uint32, int]{Name: "half", Kind: Sometimes, Check: func(s *uint32) string {
		if bits.OnesCount32(*s) == n/2 {
			return "half"
		}
		return ""
	}}
	for _, tt := range []struct {
		name  string
		props []Property[uint32, int]
	}{{"pass", []Property[uint32, int]{half}}, {"violated", []Property[uint32, int]{big, half}}} {
		t.Run(tt.name, func(t *testing.T) {
			m := subsets{n: n, props: tt.props}
			want, _ := runEngine(t, Model[uint32, int](m), Options{Workers: 2})
			for _, opts := range []Options{
				{Workers: 1, MemBudget: 256 << 10},
				{Workers: 3, MemBudget: 256 << 10},
				{Workers: 2, MemBudget: 256 << 10, ForceDisk: true},
			} {
				got, passes := runEngine(t, Model[uint32, int](m), opts)
				if passes < 2 {
					t.Errorf("%+v: no level took passes", opts)
				}
				w, g := zeroTimes(want), zeroTimes(got)
				if !reflect.DeepEqual(w, g) {
					t.Errorf("%d passes, %+v:\n got %+v\nwant %+v", passes, opts, g, w)
				}
			}
		})
	}
}

// budgetRun is what the child process of TestMemoryBudget reports.
type budgetRun struct {
	Stats  Stats
	Passes int
}

// TestHelperBudgetRun is not a test: run by TestMemoryBudget in a child
// process, it explores a model far larger than $CUTCHECK_BUDGET bytes
// within that budget and prints its statistics.
func TestHelperBudgetRun(t *testing.T) {
	budget, _ := strconv.ParseInt(os.Getenv("CUTCHECK_BUDGET"), 10, 64)
	if budget == 0 {
		t.Skip("helper for TestMemoryBudget")
	}
	res, passes := runEngine(t, Model[uint32, int](subsets{n: 23}), Options{Workers: 2, MemBudget: budget})
	json.NewEncoder(os.Stdout).Encode(budgetRun{res.Stats, passes})
}

// Reference: issue 10, finding 5. A run whose states need several times
// its budget (8.4M states: a 100 MiB seen-set and levels of 1.35M states
// with 12M successors) spills to disk and expands its widest levels in
// passes, and its peak resident memory stays within 10% of the budget.
func TestMemoryBudget(t *testing.T) {
	if raceEnabled || testing.Short() || runtime.GOOS != "linux" {
		t.Skip("measures a 30-second run's resident memory: not under -race or -short, Linux only")
	}
	const budget = 128 << 20
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBudgetRun$", "-test.v=false")
	cmd.Env = append(os.Environ(), fmt.Sprintf("CUTCHECK_BUDGET=%d", budget))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var r budgetRun
	if err := json.Unmarshal(firstLine(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	t.Logf("budget %d MiB: peak resident %d MiB; %d distinct states, on disk %v, at most %d passes a level, %v",
		budget>>20, peak>>20, r.Stats.Distinct, r.Stats.OnDisk, r.Passes, r.Stats.Elapsed)
	if r.Stats.Distinct != 1<<23 || !r.Stats.OnDisk || r.Passes < 2 {
		t.Errorf("the run did not spill and pass as intended: %+v", r)
	}
	if peak > budget*11/10 {
		t.Errorf("peak resident memory %d MiB exceeds the %d MiB budget by more than 10%%", peak>>20, budget>>20)
	}
}

func firstLine(b []byte) []byte {
	for i, c := range b {
		if c == '\n' {
			return b[:i]
		}
	}
	return b
}

// tree is a tree of the given depth whose states at depth d have
// branching(d) successors each. A state is its depth in the low 3 bits and
// its index in its level above them.
type tree struct {
	depth     uint32 // at most 7
	branching func(d uint32) uint32
}

func (tree) Init() []uint32 { return []uint32{0} }
func (m tree) Actions(s *uint32, buf []int) []int {
	if d := *s & 7; d < m.depth {
		for a := range m.branching(d) {
			buf = append(buf, int(a))
		}
	}
	return buf
}
func (m tree) Next(s *uint32, a int, t *uint32) bool {
	d, id := *s&7, *s>>3
	*t = (id*m.branching(d)+uint32(a))<<3 | (d + 1)
	return true
}
func (tree) Properties() []Property[uint32, int] { return nil }
func (m tree) Done(s *uint32) bool               { return *s&7 == m.depth }

// bursts branches 16 and 4 in turn: level d holds 16, 64, 1024, 4096, 65536
// states for d = 1..5. A level that branches 16 follows one that branched
// 4, so an estimate from the last level's ratios is four times too low
// there.
var bursts = tree{5, func(d uint32) uint32 { return 16 >> (2 * (d & 1)) }}

// Reference: passes.go. A level several times wider than its estimate is
// measured on a small first slice and cut by what it measured, so no pass
// holds more than the room planned for it; and the result is the single
// run's.
func TestPassesMeasureTheLevel(t *testing.T) {
	want, err := Run(context.Background(), Machine[uint32, int](bursts), Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	got, e := runEngineOf(t, Machine[uint32, int](bursts), Options{Workers: 2, MemBudget: 1 << 20})
	if got.Stats.Distinct != want.Stats.Distinct || got.Stats.Distinct != 1+16+64+1024+4096+65536 || got.Stats.Generated != want.Stats.Generated {
		t.Errorf("%d distinct, %d generated; single run %d, %d", got.Stats.Distinct, got.Stats.Generated, want.Stats.Distinct, want.Stats.Generated)
	}
	t.Logf("at most %d passes a level; a pass held at most %.2f times the room planned for it", e.mostPasses, e.passOver)
	if e.mostPasses < 2 {
		t.Fatalf("no level took passes")
	}
	if e.passOver > 1 {
		t.Errorf("a pass held %.2f times the room planned for it", e.passOver)
	}
}

// flare branches 2 for six levels, then 1024 at once: 64 states at level
// 6, 65,536 at level 7. Level 7 is planned from level 6's ratios, which fit
// one pass easily.
var flare = tree{7, func(d uint32) uint32 {
	if d == 6 {
		return 1024
	}
	return 2
}}

// A level planned for one pass that turns out far wider is abandoned once
// it outgrows its level map and redone in passes planned from what it
// showed, so its tables never grow past the budget; the result, generated
// count included, is the single run's.
func TestOnePassLevelRedoneInPasses(t *testing.T) {
	want, err := Run(context.Background(), Machine[uint32, int](flare), Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	got, e := runEngineOf(t, Machine[uint32, int](flare), Options{Workers: 2, MemBudget: 1 << 20})
	if got.Stats.Distinct != want.Stats.Distinct || got.Stats.Distinct != 1+2+4+8+16+32+64+65536 ||
		got.Stats.Generated != want.Stats.Generated || !reflect.DeepEqual(got.Coverage, want.Coverage) {
		t.Errorf("%d distinct, %d generated, coverage %v; single run %d, %d, %v", got.Stats.Distinct, got.Stats.Generated, got.Coverage, want.Stats.Distinct, want.Stats.Generated, want.Coverage)
	}
	t.Logf("%d levels redone; at most %d passes a level; a pass held at most %.2f times its room", e.widened, e.mostPasses, e.passOver)
	if e.widened < 1 || e.mostPasses < 2 {
		t.Fatalf("%d levels redone, at most %d passes: level 7 was not redone in passes", e.widened, e.mostPasses)
	}
	if e.passOver > 1 {
		t.Errorf("a pass held %.2f times the room planned for it", e.passOver)
	}
}

// Reference: issue 21, finding 10. A run spills only when its budget
// demands it: a level that outgrows the level map planned for it, under a
// budget far above what the level needs, is redone in one pass with a
// larger map, not cut into passes on disk (parallel-4 went to disk at 2.3
// GB resident under a 17.6 GiB budget this way).
func TestRoomyBudgetStaysInMemory(t *testing.T) {
	got, e := runEngineOf(t, Machine[uint32, int](flare), Options{Workers: 2, MemBudget: 64 << 20})
	const distinct = 1 + 2 + 4 + 8 + 16 + 32 + 64 + 65536 // a tree: every state generated once
	if got.Verdict != Pass || got.Stats.Distinct != distinct || got.Stats.Generated != distinct-1 {
		t.Errorf("%v, %d distinct, %d generated; want pass, %d and %d", got.Verdict, got.Stats.Distinct, got.Stats.Generated, distinct, distinct-1)
	}
	if e.widened < 1 {
		t.Fatalf("level 7 did not outgrow its level map: the test does not test the redo")
	}
	if got.Stats.OnDisk || e.mostPasses > 1 {
		t.Errorf("a 64 MiB budget for a 65,536-state level (a few MiB): on disk %v, at most %d passes a level (%d redone)", got.Stats.OnDisk, e.mostPasses, e.widened)
	}
}
