package explore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
)

// lock is a multi-process model written as a PlusCal translation would be:
// each of procs processes has a program counter and loops
//
//	idle: request the lock          → waiting
//	waiting: when the lock is free, take it → critical
//	critical: release the lock      → idle
//
// The racy variant splits "when the lock is free, take it" in two steps,
// a test and then a set, so two processes can both see the lock free.
//
// Only Machine's four methods are written: the state is a fixed-size value
// (the default codec applies) and actions print themselves (String). The
// entry counters grow without bound, so a state constraint bounds the
// search as a TLC model would; the processes are interchangeable, so the
// model declares a symmetry (process renaming).
type lock struct {
	racy       bool
	maxEntries int // the constraint: at most this many entries in all
}

const procs = 3

// Program counters.
const (
	idle uint8 = iota
	waiting
	tested // racy only: saw the lock free, has not taken it yet
	critical
)

var pcNames = [...]string{"idle", "waiting", "tested", "critical"}

type lockState struct {
	PC      [procs]uint8 // each process's program counter
	Entries [procs]uint8 // how often each has entered its critical section
	Locked  bool
}

// lockStep is process P taking the step Op at its program counter.
type lockStep struct{ P, Op uint8 }

// Steps.
const (
	opRequest uint8 = iota // idle → waiting
	opTake                 // waiting → critical, when the lock is free
	opTest                 // racy: waiting → tested, when the lock is free
	opSet                  // racy: tested → critical
	opRelease              // critical → idle
)

func (a lockStep) String() string {
	return fmt.Sprintf("p%d %s", a.P, [...]string{"request", "take", "test", "set", "release"}[a.Op])
}

func (m lock) Init() []lockState { return []lockState{{}} }

func (m lock) Actions(s *lockState, buf []lockStep) []lockStep {
	for p := range uint8(procs) {
		switch s.PC[p] {
		case idle:
			buf = append(buf, lockStep{p, opRequest})
		case waiting:
			switch {
			case s.Locked: // blocked
			case m.racy:
				buf = append(buf, lockStep{p, opTest})
			default:
				buf = append(buf, lockStep{p, opTake})
			}
		case tested:
			buf = append(buf, lockStep{p, opSet})
		case critical:
			buf = append(buf, lockStep{p, opRelease})
		}
	}
	return buf
}

func (m lock) Next(s *lockState, a lockStep, t *lockState) bool {
	p := a.P
	switch a.Op {
	case opRequest:
		t.PC[p] = waiting
	case opTest:
		t.PC[p] = tested // saw the lock free; the set comes later
	case opTake, opSet:
		t.PC[p], t.Locked, t.Entries[p] = critical, true, t.Entries[p]+1
	case opRelease:
		t.PC[p], t.Locked = idle, false
	}
	return true
}

func (m lock) Properties() []explore.Property[lockState, lockStep] {
	return []explore.Property[lockState, lockStep]{
		{Name: "mutual-exclusion", Cite: "at most one process is critical", Kind: explore.Always,
			Check: func(s *lockState) string {
				var in []string
				for p, pc := range s.PC {
					if pc == critical {
						in = append(in, fmt.Sprint("p", p))
					}
				}
				if len(in) > 1 {
					return strings.Join(in, " and ") + " are both critical"
				}
				return ""
			}},
		{Name: "all-waiting", Kind: explore.Sometimes, Check: func(s *lockState) string {
			if s.PC == [procs]uint8{waiting, waiting, waiting} {
				return "every process waits"
			}
			return ""
		}},
	}
}

// StateConstraint bounds the entries, as a TLC CONSTRAINT would.
func (m lock) StateConstraint(s *lockState) bool {
	n := 0
	for _, e := range s.Entries {
		n += int(e)
	}
	return n <= m.maxEntries
}

// Canonical renames the processes so that their (pc, entries) pairs are
// sorted: states that differ only in which process is which are one class.
// Nothing checked depends on process names, so the reduction is sound.
func (m lock) Canonical(s *lockState) lockState {
	t := *s
	for i := 1; i < procs; i++ {
		for j := i; j > 0 && (t.PC[j] < t.PC[j-1] || t.PC[j] == t.PC[j-1] && t.Entries[j] < t.Entries[j-1]); j-- {
			t.PC[j], t.PC[j-1] = t.PC[j-1], t.PC[j]
			t.Entries[j], t.Entries[j-1] = t.Entries[j-1], t.Entries[j]
		}
	}
	return t
}

// Fields lets traces show what changed at each step.
func (m lock) Fields(s *lockState) []explore.Field {
	var pcs []string
	for _, pc := range s.PC {
		pcs = append(pcs, pcNames[pc])
	}
	return []explore.Field{{Name: "pc", Value: strings.Join(pcs, " ")}, {Name: "locked", Value: fmt.Sprint(s.Locked)}}
}

// Example_processes checks the lock with and without its symmetry (64
// classes for 280 states, TestLockCounts recounts both by brute force),
// then finds the racy variant's shortest violation: a trace of concrete
// states, even though the search identified states up to renaming.
func Example_processes() {
	ctx := context.Background()
	m := lock{maxEntries: 3}
	for _, opts := range []explore.Options{{Symmetry: true}, {}} {
		res, err := explore.Run(ctx, explore.Machine[lockState, lockStep](m), opts)
		if err != nil {
			panic(err)
		}
		s := res.Stats
		fmt.Printf("symmetry %-5v %v: %d distinct, %d generated, depth %d (TLC: %d generated, depth %d); all-waiting reached: %v\n",
			s.Symmetry, res.Verdict, s.Distinct, s.Generated, s.Depth, s.TLCGenerated, s.TLCDepth, res.Sometimes[0].Reached)
	}

	racy := lock{racy: true, maxEntries: 3}
	res, err := explore.Run(ctx, explore.Machine[lockState, lockStep](racy), explore.Options{Symmetry: true})
	if err != nil {
		panic(err)
	}
	fmt.Print(explore.NewReport(racy, res).Violation.Text(false))
	// Output:
	// symmetry true  pass: 64 distinct, 168 generated, depth 12 (TLC: 169 generated, depth 13); all-waiting reached: true
	// symmetry false pass: 280 distinct, 720 generated, depth 12 (TLC: 721 generated, depth 13); all-waiting reached: true
	// step 0: initial state
	//   pc: idle idle idle
	//   locked: false
	// step 1: p0 request
	//   pc: idle idle idle → waiting idle idle
	// step 2: p0 test
	//   pc: waiting idle idle → tested idle idle
	// step 3: p1 request
	//   pc: tested idle idle → tested waiting idle
	// step 4: p1 test
	//   pc: tested waiting idle → tested tested idle
	// step 5: p0 set
	//   pc: tested tested idle → critical tested idle
	//   locked: false → true
	// step 6: p1 set
	//   pc: critical tested idle → critical critical idle
	// violated: mutual-exclusion (always, at most one process is critical)
	//   p0 and p1 are both critical
}

// The example's counts, by a plain search with a map of states (no
// fingerprints, no parallelism): the states inside the constraint, the
// steps from them, and the classes under process renaming, whose steps
// are those of any one member.
func TestLockCounts(t *testing.T) {
	m := lock{maxEntries: 3}
	seen := map[lockState]bool{}
	front := m.Init()
	seen[front[0]] = true
	generated, depth := 0, -1
	for len(front) > 0 {
		depth++
		var next []lockState
		for _, s := range front {
			for _, a := range m.Actions(&s, nil) {
				t := s
				m.Next(&s, a, &t)
				generated++
				if m.StateConstraint(&t) && !seen[t] {
					seen[t] = true
					next = append(next, t)
				}
			}
		}
		front = next
	}
	classes := map[lockState]int{}
	classGen := 0
	for s := range seen {
		c := m.Canonical(&s)
		if _, ok := classes[c]; !ok {
			classes[c] = len(m.Actions(&s, nil))
			classGen += classes[c]
		}
	}
	for _, tt := range []struct {
		opts                explore.Options
		distinct, generated int
	}{{explore.Options{}, len(seen), generated}, {explore.Options{Symmetry: true}, len(classes), classGen}} {
		res, err := explore.Run(context.Background(), explore.Machine[lockState, lockStep](m), tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		if s := res.Stats; s.Distinct != uint64(tt.distinct) || s.Generated != uint64(tt.generated) || s.Depth != depth {
			t.Errorf("%+v: %+v; want %d distinct, %d generated, depth %d", tt.opts, s, tt.distinct, tt.generated, depth)
		}
	}
}
