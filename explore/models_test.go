package explore

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// jugs is the Die Hard puzzle: a 3-gallon and a 5-gallon jug, a tap and a
// drain. The state is (small, big) in gallons.
type jugs struct {
	always bool // check "big jug never holds 4 gallons"
}

type jugState struct{ Small, Big int }

type jugAction uint8

const (
	fillSmall jugAction = iota
	fillBig
	emptySmall
	emptyBig
	pourSmallBig
	pourBigSmall
)

var jugNames = []string{"fill small", "fill big", "empty small", "empty big", "pour small into big", "pour big into small"}

func (jugs) Init() []jugState { return []jugState{{0, 0}} }

func (jugs) Actions(s *jugState, buf []jugAction) []jugAction {
	return append(buf, fillSmall, fillBig, emptySmall, emptyBig, pourSmallBig, pourBigSmall)
}

func (jugs) Next(s *jugState, a jugAction, t *jugState) bool {
	switch a {
	case fillSmall:
		t.Small = 3
	case fillBig:
		t.Big = 5
	case emptySmall:
		t.Small = 0
	case emptyBig:
		t.Big = 0
	case pourSmallBig:
		n := min(s.Small, 5-s.Big)
		t.Small, t.Big = s.Small-n, s.Big+n
	case pourBigSmall:
		n := min(s.Big, 3-s.Small)
		t.Small, t.Big = s.Small+n, s.Big-n
	}
	return *t != *s
}

func (jugs) Encode(s *jugState, buf []byte) []byte { return append(buf, byte(s.Small), byte(s.Big)) }

func (jugs) Decode(b []byte, s *jugState) error {
	if len(b) != 2 {
		return errors.New("jugs: bad encoding")
	}
	*s = jugState{int(b[0]), int(b[1])}
	return nil
}

func (j jugs) Properties() []Property[jugState, jugAction] {
	if !j.always {
		return nil
	}
	return []Property[jugState, jugAction]{{
		Name: "big-not-4", Cite: "Die Hard 3", Kind: Always,
		Check: func(s *jugState) string {
			if s.Big == 4 {
				return "big jug holds 4 gallons"
			}
			return ""
		},
	}}
}

func (jugs) Describe(s *jugState, a jugAction) string { return jugNames[a] }
func (jugs) ActionNames() []string                    { return jugNames }
func (jugs) ActionKind(a jugAction) int               { return int(a) }
func (jugs) Fields(s *jugState) []Field {
	return []Field{{"small", fmt.Sprint(s.Small)}, {"big", fmt.Sprint(s.Big)}}
}

// counters is a product of k counters, each 0..n-1, with one increment
// action per counter; the state with every counter at n-1 is done.
type counters struct {
	k, n  int
	props []Property[uint64, int]
}

func (c counters) get(s uint64, i int) int { return int(s>>(8*i)) & 0xff }

func (c counters) Init() []uint64 { return []uint64{0} }

func (c counters) Actions(s *uint64, buf []int) []int {
	for i := 0; i < c.k; i++ {
		if c.get(*s, i) < c.n-1 {
			buf = append(buf, i)
		}
	}
	return buf
}

func (c counters) Next(s *uint64, a int, t *uint64) bool { *t = *s + 1<<(8*a); return true }

func (c counters) Encode(s *uint64, buf []byte) []byte {
	return binary.LittleEndian.AppendUint64(buf, *s)
}

func (c counters) Decode(b []byte, s *uint64) error {
	if len(b) != 8 {
		return errors.New("counters: bad encoding")
	}
	*s = binary.LittleEndian.Uint64(b)
	return nil
}

func (c counters) Properties() []Property[uint64, int] { return c.props }
func (c counters) Describe(s *uint64, a int) string    { return fmt.Sprintf("inc c%d", a) }
func (c counters) ActionNames() []string {
	var names []string
	for i := 0; i < c.k; i++ {
		names = append(names, fmt.Sprintf("inc c%d", i))
	}
	return names
}
func (c counters) ActionKind(a int) int { return a }
func (c counters) Done(s *uint64) bool {
	for i := 0; i < c.k; i++ {
		if c.get(*s, i) != c.n-1 {
			return false
		}
	}
	return true
}

// chain is 0 → 1 → … → n: one action, "step", enabled below n. The last
// state has no successor: a deadlock at depth n unless done says otherwise.
// With noop, the action stays enabled at n but changes nothing.
type chain struct {
	n    int
	noop bool
}

func (c chain) Init() []int { return []int{0} }
func (c chain) Actions(s *int, buf []int) []int {
	if *s < c.n || c.noop {
		buf = append(buf, 0)
	}
	return buf
}
func (c chain) Next(s *int, a int, t *int) bool  { *t = *s + 1; return *s < c.n }
func (c chain) Encode(s *int, buf []byte) []byte { return binary.AppendUvarint(buf, uint64(*s)) }
func (c chain) Decode(b []byte, s *int) error    { v, _ := binary.Uvarint(b); *s = int(v); return nil }
func (c chain) Properties() []Property[int, int] { return nil }
func (c chain) Describe(s *int, a int) string    { return "step" }
func (c chain) ActionNames() []string            { return []string{"step"} }
func (c chain) ActionKind(a int) int             { return 0 }

// doneChain is a chain whose last state is an expected end.
type doneChain struct{ chain }

func (c doneChain) Done(s *int) bool { return *s == c.n }

// ring counts modulo n, "tick": s → (s+1) mod n. The transition property
// "tick-increases" fails on the step n-1 → 0, to a state seen long before.
type ring struct{ n int }

func (r ring) Init() []int                      { return []int{0} }
func (r ring) Actions(s *int, buf []int) []int  { return append(buf, 0) }
func (r ring) Next(s *int, a int, t *int) bool  { *t = (*s + 1) % r.n; return true }
func (r ring) Encode(s *int, buf []byte) []byte { return binary.AppendUvarint(buf, uint64(*s)) }
func (r ring) Decode(b []byte, s *int) error    { v, _ := binary.Uvarint(b); *s = int(v); return nil }
func (r ring) Describe(s *int, a int) string    { return "tick" }
func (r ring) ActionNames() []string            { return []string{"tick"} }
func (r ring) ActionKind(a int) int             { return 0 }
func (r ring) Properties() []Property[int, int] {
	return []Property[int, int]{{
		Name: "tick-increases", Kind: Transition,
		CheckStep: func(s *int, a int, t *int) string {
			if *t <= *s {
				return fmt.Sprintf("tick went from %d to %d", *s, *t)
			}
			return ""
		},
	}}
}

// rotor is three counters 0..n-1 with an increment per counter and a
// rotation (c0, c1, c2) → (c1, c2, c0), which changes no sum: every one of
// the n³ states is reachable, by many paths of different lengths, so the
// level map and the seen-set both see plenty of duplicates. With bad ≥ 0
// the Always property "sum-not-bad" fails on every state whose counters sum
// to bad; the first of them lie at depth bad, many at once.
type rotor struct{ n, bad int }

type rotorState [3]uint8

func (r rotor) Init() []rotorState { return []rotorState{{}} }
func (r rotor) Actions(s *rotorState, buf []int) []int {
	for i := range 3 {
		if int(s[i]) < r.n-1 {
			buf = append(buf, i)
		}
	}
	return append(buf, 3)
}
func (r rotor) Next(s *rotorState, a int, t *rotorState) bool {
	if a == 3 {
		*t = rotorState{s[1], s[2], s[0]}
		return *t != *s
	}
	t[a]++
	return true
}
func (r rotor) Encode(s *rotorState, buf []byte) []byte { return append(buf, s[:]...) }
func (r rotor) Decode(b []byte, s *rotorState) error {
	if len(b) != 3 {
		return errors.New("rotor: bad encoding")
	}
	*s = rotorState{b[0], b[1], b[2]}
	return nil
}
func (r rotor) Describe(s *rotorState, a int) string {
	if a == 3 {
		return "rotate"
	}
	return fmt.Sprintf("inc c%d", a)
}
func (r rotor) ActionNames() []string   { return []string{"inc c0", "inc c1", "inc c2", "rotate"} }
func (r rotor) ActionKind(a int) int    { return a }
func (r rotor) Done(s *rotorState) bool { return true }
func (r rotor) sum(s *rotorState) int   { return int(s[0]) + int(s[1]) + int(s[2]) }
func (r rotor) Fields(s *rotorState) []Field {
	return []Field{{"c0", fmt.Sprint(s[0])}, {"c1", fmt.Sprint(s[1])}, {"c2", fmt.Sprint(s[2])}}
}
func (r rotor) Properties() []Property[rotorState, int] {
	ps := []Property[rotorState, int]{
		{Name: "inc-adds-one", Kind: Transition, CheckStep: func(s *rotorState, a int, t *rotorState) string {
			if d := r.sum(t) - r.sum(s); (a < 3 && d != 1) || (a == 3 && d != 0) {
				return fmt.Sprintf("sum changed by %d", d)
			}
			return ""
		}},
		{Name: "all-equal-mid", Kind: Sometimes, Check: func(s *rotorState) string {
			if m := uint8(r.n / 2); *s == (rotorState{m, m, m}) {
				return "all counters at the middle"
			}
			return ""
		}},
	}
	if r.bad >= 0 {
		ps = append(ps, Property[rotorState, int]{Name: "sum-not-bad", Cite: "test", Kind: Always, Check: func(s *rotorState) string {
			if r.sum(s) == r.bad {
				return fmt.Sprintf("sum is %d", r.bad)
			}
			return ""
		}})
	}
	return ps
}

// badDecode is a counter whose encodings cannot be decoded.
type badDecode struct{ chain }

func (badDecode) Decode(b []byte, s *int) error { return errors.New("cannot decode") }

// brute is what a plain breadth-first search finds, with a map of encodings
// and no fingerprints or parallelism: the reference the engine must match.
type brute struct {
	distinct, generated int
	levels              []int // states per level
}

func bruteBFS[S, A any](m Model[S, A]) brute {
	var r brute
	seen := map[string]bool{}
	var front []S
	for _, s := range m.Init() {
		if k := string(m.Encode(&s, nil)); !seen[k] {
			seen[k] = true
			front = append(front, s)
		}
	}
	for len(front) > 0 {
		r.levels = append(r.levels, len(front))
		var next []S
		for _, s := range front {
			for _, a := range m.Actions(&s, nil) {
				t := s
				ok := m.Next(&s, a, &t)
				if !ok {
					continue
				}
				r.generated++
				if k := string(m.Encode(&t, nil)); !seen[k] {
					seen[k] = true
					next = append(next, t)
				}
			}
		}
		front = next
	}
	r.distinct = len(seen)
	return r
}
