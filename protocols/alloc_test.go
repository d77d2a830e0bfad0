package protocols

import (
	"testing"

	"github.com/cutcheck/cutcheck/explore"
)

// stepAllocs is the heap allocations of one round of what the explorer calls
// per state — Actions, then Next and Encode for each action, and Decode of
// the encoding — averaged over the first states of a breadth-first walk.
func stepAllocs[S, A any](t *testing.T, m explore.Model[S, A]) float64 {
	t.Helper()
	states := m.Init()
	var acts []A
	for i := 0; i < len(states) && len(states) < 300; i++ {
		acts = m.Actions(&states[i], acts[:0])
		for _, a := range acts {
			next := states[i]
			if m.Next(&states[i], a, &next) {
				states = append(states, next)
			}
		}
	}
	acts = make([]A, 0, 256)
	buf := make([]byte, 0, 4096)
	succ := new(S)
	dec := new(S)
	var zero S
	i := 0
	return testing.AllocsPerRun(len(states), func() {
		s := &states[i%len(states)]
		i++
		acts = m.Actions(s, acts[:0])
		for _, a := range acts {
			*succ = *s
			m.Next(s, a, succ)
			buf = m.Encode(succ, buf[:0])
			*dec = zero
			if err := m.Decode(buf, dec); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// The explorer's calls into a shipped model allocate nothing per state:
// an allocation there costs more than the step (parallel's Actions once
// built a widened configuration on the heap for every state).
func TestStepsAllocateNothing(t *testing.T) {
	cfg := Config{Keys: 3, Values: 2, Events: 3, Chunks: 2, Txn: 2}
	for name, allocs := range map[string]float64{
		"classic":               stepAllocs(t, newClassic(cfg)),
		"readonly":              stepAllocs(t, newReadonly(cfg)),
		"parallel":              stepAllocs(t, newParallel(cfg, ParallelParts{})),
		"parallel whole-server": stepAllocs(t, newParallel(Config{Keys: 3, Values: 2, Events: 3, Chunks: 2, Txn: 2, WholeServer: true}, ParallelParts{})),
		"composite":             stepAllocs(t, newComposite(Config{Keys: 3, Values: 2, Events: 3, Chunks: 2, Txn: 2, Mode: "mixed"})),
		"dump":                  stepAllocs(t, newDump(Config{Keys: 3, Values: 2, Events: 3, Chunks: 1, Txn: 2, Mode: "uncertain"})),
	} {
		if allocs != 0 {
			t.Errorf("%s: %v allocations per state", name, allocs)
		}
	}
}
