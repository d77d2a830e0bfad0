package protocols

import (
	"context"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

// txnsPrefix reports whether the row transactions of l (markers left out)
// and those of h agree, in order, as far as both go: l a prefix of h, or h
// of l. These are the logs of the unrestricted source that a fixed history
// h allows (after h the source is free).
func txnsPrefix(l, h *model.Log) bool {
	var evs []model.Event
	for p := model.Coord(1); p <= l.Len(); p++ {
		if e := l.At(p); e.Key != model.NoKey {
			evs = append(evs, e)
		}
	}
	n, hn := len(evs), int(h.N)
	for i := range min(n, hn) {
		he := h.Ev[i]
		if evs[i].Key != he.Key || evs[i].Img != he.Img || i > 0 && (evs[i].Txn == evs[i-1].Txn) != (he.Txn == h.Ev[i-1].Txn) {
			return false
		}
	}
	switch { // where the shorter ends, the longer ends a transaction too
	case n == 0 || hn == 0 || n == hn:
		return true
	case n < hn:
		return h.Ev[n].Txn != h.Ev[n-1].Txn
	}
	return evs[hn].Txn != evs[hn-1].Txn
}

// countHistory counts m's states under cfg with the history fixed, and the
// unrestricted model's states whose log txnsPrefix allows, with all of
// them.
func countHistory[S, A any](t *testing.T, build func(Config) explore.Machine[S, A], capture func(*S) *model.Capture, cfg Config, h model.Log) [3]uint64 {
	t.Helper()
	run := func(m explore.Machine[S, A]) uint64 {
		r, err := explore.Run(context.Background(), m, explore.Options{Workers: 2, NoDeadlock: true})
		if err != nil {
			t.Fatal(err)
		}
		return r.Stats.Distinct
	}
	with := cfg
	with.History = h
	fixed := run(build(with))
	prefix := run(explore.Extend(build(cfg), explore.Extra[S, A]{Constraint: func(s *S) bool { return txnsPrefix(&capture(s).Log, &h) }}))
	return [3]uint64{fixed, prefix, run(build(cfg))}
}

// Reference: §2.1 — a fixed history restricts the source and nothing else:
// every protocol reaches exactly the states of the unrestricted search
// whose log is a prefix of the history, transaction by transaction (or,
// for a history shorter than events, begins with it).
func TestHistoryRestrictsSource(t *testing.T) {
	histories := [][]string{{"k0=1", "k1=2"}, {"k1=2 k0=1"}, {"k0=1", "k0=⊥"}, {"k1=1"}}
	for _, hs := range histories {
		h, err := ParseHistory(hs)
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 2}
		check := func(name string, n [3]uint64) {
			t.Helper()
			t.Logf("%s %s: %d fixed, %d prefix, %d all", name, HistoryString(&h), n[0], n[1], n[2])
			if n[0] != n[1] || n[0] == 0 || n[0] >= n[2] {
				t.Errorf("%s %s: %d states with the history fixed, %d of the %d unrestricted have a prefix of it as their log", name, HistoryString(&h), n[0], n[1], n[2])
			}
		}
		check("classic", countHistory(t, func(c Config) explore.Machine[classicState, classicAction] { return newClassic(c) }, func(s *classicState) *model.Capture { return &s.Cap }, cfg, h))
		check("readonly", countHistory(t, func(c Config) explore.Machine[readonlyState, readonlyAction] { return newReadonly(c) }, func(s *readonlyState) *model.Capture { return &s.Cap }, cfg, h))
		check("parallel", countHistory(t, func(c Config) explore.Machine[parallelState, parallelAction] { return newParallel(c, ParallelParts{}) }, func(s *parallelState) *model.Capture { return &s.Cap }, cfg, h))
		dump := cfg
		dump.Mode = "trusted"
		check("dump", countHistory(t, func(c Config) explore.Machine[dumpState, dumpAction] { return newDump(c) }, func(s *dumpState) *model.Capture { return &s.Cap }, dump, h))
		for _, mode := range []string{CompositeTablesync, CompositeMixed} {
			comp := cfg
			comp.Mode = mode
			check("composite "+mode, countHistory(t, func(c Config) explore.Machine[compositeState, compositeAction] { return newComposite(c) }, func(s *compositeState) *model.Capture { return &s.Cap }, comp, h))
		}
	}
}
