package model_test

import (
	"testing"

	"github.com/cutcheck/cutcheck/model"
)

// example41 is Example 4.1: L = e1 e2 e3 with e1: a=1, e2: a=2, e3: c=9; one
// unit over {a, b, c}, bracket (c1, c2), frontier c3, R = {a: 1, b: ⊥, c: ⊥}.
func example41(t testing.TB) (model.Log, model.Plan) {
	l := logOf(t, ev(ka, 1), ev(ka, 2), ev(kc, 9))
	p := plan(3, 3, unit(keys(ka, kb, kc), 1, 2, model.Store{ka: 1, kb: bot, kc: bot}))
	return l, p
}

// Reference: §4.2, Example 4.1 (window replay) and Theorem 1.
func TestExample41(t *testing.T) {
	l, p := example41(t)
	if err := p.Check(&l); err != nil {
		t.Fatalf("O1–O3: %v", err)
	}
	// "O2 is satisfied with witness c1 for all three keys."
	if got := p.SharedWitnesses(&l); got != coords(1) {
		t.Errorf("SharedWitnesses = %b, want {c1}", got)
	}
	const f = 3
	cases := []struct {
		name    string
		k       model.Key
		refresh model.Value
		caseA   bool        // an event for k lies in (lo, f]
		decider model.Coord // the last such event
		sink    model.Value
	}{
		{"a: stale read, evicted", ka, 1, true, 2, 2},
		{"b: true absence, kept", kb, bot, false, 0, bot},
		{"c: superseded after the bracket", kc, bot, true, 3, 9},
	}
	for _, tc := range cases {
		if p.Units[0].Refresh[tc.k] != tc.refresh || l.Sigma(1, tc.k) != tc.refresh {
			t.Errorf("%s: refresh %v, σ_c1 %v, want %v", tc.name, p.Units[0].Refresh[tc.k], l.Sigma(1, tc.k), tc.refresh)
		}
		_, at, ok := l.Last(tc.k, model.Window{Lo: 1, Hi: f})
		if ok != tc.caseA || at != tc.decider {
			t.Errorf("%s: last event in (c1, c3] at %d (%v), want %d (%v)", tc.name, at, ok, tc.decider, tc.caseA)
		}
		if got := p.Sink(&l, f, tc.k); got != tc.sink {
			t.Errorf("%s: sink_f = %v, want %v", tc.name, got, tc.sink)
		}
		if got := l.Sigma(f, tc.k); got != tc.sink {
			t.Errorf("%s: σ_c3 = %v, want %v", tc.name, got, tc.sink)
		}
	}
	// "All three agree with σ_c3 = {a ↦ 2, c ↦ 9}."
	want := model.Store{ka: 2, kb: bot, kc: 9}
	if got := p.SinkState(&l, f); got != want || l.State(f) != want {
		t.Errorf("SinkState(c3) = %v, State(c3) = %v, want %v", got, l.State(f), want)
	}
	// The canonical trajectory (Def. 4.1): the refresh stands up to lo = c1.
	traj := []struct {
		g     model.Coord
		sink  model.Store
		sigma model.Store
	}{
		{0, model.Store{1, bot, bot}, model.Store{}},
		{1, model.Store{1, bot, bot}, model.Store{1, bot, bot}},
		{2, model.Store{2, bot, bot}, model.Store{2, bot, bot}},
		{3, model.Store{2, bot, 9}, model.Store{2, bot, 9}},
	}
	for _, tc := range traj {
		if got := p.SinkState(&l, tc.g); got != tc.sink {
			t.Errorf("sink_%d = %v, want %v", tc.g, got, tc.sink)
		}
		if got := l.State(tc.g); got != tc.sigma {
			t.Errorf("σ_%d = %v, want %v", tc.g, got, tc.sigma)
		}
	}
	if h := p.LatestHigh(); h != 2 {
		t.Errorf("LatestHigh = %d, want 2", h)
	}
	for _, tc := range []struct {
		from model.Coord
		g    model.Coord
		k    model.Key
		ok   bool
	}{
		{2, 0, model.NoKey, true}, // Lemma 4.2 from the latest high c2
		{1, 0, model.NoKey, true}, // Corollary 1 from the shared witness c1
		{0, 0, ka, false},         // before the bracket the refresh a=1 stands, σ_c0(a) = ⊥
	} {
		g, k, ok := p.Trajectory(&l, tc.from, f)
		if g != tc.g || k != tc.k || ok != tc.ok {
			t.Errorf("Trajectory(%d, %d) = (%d, %v, %v), want (%d, %v, %v)", tc.from, f, g, k, ok, tc.g, tc.k, tc.ok)
		}
	}
}

// Reference: §4.3, Proposition 1 (no shared read point).
func TestProposition1(t *testing.T) {
	// L = e1 e2, e1: a=1, e2: b=2; one unit over {a, b}, bracket (c0, c2),
	// f = c2, R(a) = ⊥, R(b) = 2.
	l := logOf(t, ev(ka, 1), ev(kb, 2))
	p := plan(2, 2, unit(keys(ka, kb), 0, 2, model.Store{ka: bot, kb: 2}))
	if err := p.Check(&l); err != nil {
		t.Fatalf("contract: %v", err)
	}
	// O2 per key: a matches at c0, b at c2.
	for _, w := range []struct {
		k model.Key
		c model.Coord
	}{{ka, 0}, {kb, 2}} {
		if l.Sigma(w.c, w.k) != p.Units[0].Refresh[w.k] || !model.ValidIn(&l, w.k, p.Units[0].Refresh[w.k], w.c, w.c) {
			t.Errorf("key %v: not valid at its witness c%d", w.k, w.c)
		}
	}
	// No single coordinate: at c0 and c1 σ(b) = ⊥ ≠ 2; at c2 σ(a) = 1 ≠ ⊥.
	for _, tc := range []struct {
		c     model.Coord
		k     model.Key
		sigma model.Value
	}{{0, kb, bot}, {1, kb, bot}, {2, ka, 1}} {
		if got := l.Sigma(tc.c, tc.k); got != tc.sigma || got == p.Units[0].Refresh[tc.k] {
			t.Errorf("c%d: σ(%v) = %v, want %v ≠ R(%v) = %v", tc.c, tc.k, got, tc.sigma, tc.k, p.Units[0].Refresh[tc.k])
		}
	}
	if got := p.SharedWitnesses(&l); got != 0 {
		t.Errorf("SharedWitnesses = %b, want none", got)
	}
	// Cut: both keys fall under Case A, sink_f = σ_c2.
	for _, tc := range []struct {
		k  model.Key
		at model.Coord
		v  model.Value
	}{{ka, 1, 1}, {kb, 2, 2}} {
		if v, at, ok := l.Last(tc.k, model.Window{Lo: 0, Hi: 2}); !ok || at != tc.at || v != tc.v {
			t.Errorf("key %v: last event in (c0, c2] = %v@%d (%v), want e%d", tc.k, v, at, ok, tc.at)
		}
	}
	want := model.Store{ka: 1, kb: 2}
	if got := p.SinkState(&l, 2); got != want || l.State(2) != want {
		t.Errorf("SinkState(f) = %v, State(f) = %v, want %v", got, l.State(2), want)
	}
}

// Reference: §5 (after Figure 4), Proposition 2 (composition can lose every
// earlier onset).
func TestProposition2(t *testing.T) {
	// L = e1 e2 as in Proposition 1, f = c2; A: {a}, point c0, R(a) = ⊥;
	// B: {b}, point c2, R(b) = 2.
	l := logOf(t, ev(ka, 1), ev(kb, 2))
	unitA := unit(keys(ka), 0, 0, model.Store{ka: bot})
	unitB := unit(keys(kb), 2, 2, model.Store{kb: 2})
	p := plan(2, 2, unitA, unitB)
	if err := p.Check(&l); err != nil {
		t.Fatalf("contract: %v", err)
	}
	// Each member on its own satisfies Corollary 1's hypotheses at its own witness.
	for _, m := range []struct {
		name string
		u    model.Unit
		w    model.CoordSet
	}{{"A", unitA, coords(0)}, {"B", unitB, coords(2)}} {
		one := plan(2, 2, m.u)
		if got := one.SharedWitnesses(&l); got != m.w {
			t.Errorf("member %s: witnesses %b, want %b", m.name, got, m.w)
		}
	}
	if got := p.SharedWitnesses(&l); got != 0 {
		t.Errorf("composite SharedWitnesses = %b, want none", got)
	}
	want := model.Store{ka: 1, kb: 2}
	if got := p.SinkState(&l, 2); got != want || l.State(2) != want {
		t.Errorf("SinkState(f) = %v, State(f) = %v, want %v", got, l.State(2), want)
	}
	// Lemma 4.2: latest high h = c2 = f, the degenerate interval [f, f].
	if h := p.LatestHigh(); h != 2 {
		t.Errorf("LatestHigh = %d, want 2", h)
	}
	if g, k, ok := p.Trajectory(&l, 2, 2); !ok {
		t.Errorf("Trajectory(c2, c2) fails at %d on %v", g, k)
	}
	// At g = c1 unit B's window (c2, c1] is empty: sink_c1(b) = 2, σ_c1(b) = ⊥.
	if s, sigma := p.Sink(&l, 1, kb), l.Sigma(1, kb); s != 2 || sigma != bot {
		t.Errorf("sink_c1(b) = %v, σ_c1(b) = %v, want 2 and ⊥", s, sigma)
	}
	// Every onset c* below f fails somewhere in [c*, f]; g = c1 serves every one.
	for _, tc := range []struct {
		onset model.Coord
		g     model.Coord // the first failing coordinate Trajectory reports
	}{
		{0, 0}, // at c0 too, R(b) = 2 already stands against σ_c0(b) = ⊥
		{1, 1},
	} {
		if g, k, ok := p.Trajectory(&l, tc.onset, 2); ok || g != tc.g || k != kb {
			t.Errorf("Trajectory(%d, f) = (%d, %v, %v), want failure at g=%d key b", tc.onset, g, k, ok, tc.g)
		}
		if tc.onset <= 1 {
			if g, k, ok := p.Trajectory(&l, 1, 1); ok || g != 1 || k != kb {
				t.Errorf("the paper's g = c1: Trajectory(1, 1) = (%d, %v, %v), want failure on b", g, k, ok)
			}
		}
	}
}

// Reference: §3.3 (O1 coverage, O2 bracket-local validity, O3 domain
// completeness) and Def. 3.1 (lo ⊑ hi ⊑ f): which obligation fails and the
// message naming unit and key.
func TestCheckFailures(t *testing.T) {
	l := logOf(t, ev(ka, 1), ev(kb, 2), ev(ka, 3))
	full := model.Store{ka: 1, kb: 2}
	cases := []struct {
		name string
		p    model.Plan
		run  func(p *model.Plan) error
		obl  string
		unit int
		key  model.Key
		msg  string
	}{
		{
			name: "bracket lo > hi",
			p:    plan(2, 3, unit(keys(ka, kb), 2, 1, full)),
			run:  func(p *model.Plan) error { return p.CheckBrackets() },
			obl:  "bracket", unit: 0, key: model.NoKey,
			msg: "bracket unit 1: bracket 2..1 not within frontier 3",
		},
		{
			name: "bracket beyond frontier",
			p:    plan(2, 2, unit(keys(ka), 0, 1, full), unit(keys(kb), 1, 3, full)),
			run:  func(p *model.Plan) error { return p.CheckBrackets() },
			obl:  "bracket", unit: 1, key: model.NoKey,
			msg: "bracket unit 2: bracket 1..3 not within frontier 2",
		},
		{
			name: "O1 overlap",
			p:    plan(2, 3, unit(keys(ka, kb), 0, 2, full), unit(keys(ka), 0, 2, full)),
			run:  func(p *model.Plan) error { return p.CheckO1() },
			obl:  "O1", unit: 1, key: ka,
			msg: "O1 unit 2 key k0: key also owned by unit 1",
		},
		{
			name: "O1 missing key",
			p:    plan(2, 3, unit(keys(ka), 0, 2, full)),
			run:  func(p *model.Plan) error { return p.CheckO1() },
			obl:  "O1", unit: -1, key: kb,
			msg: "O1 key k1: key owned by no unit",
		},
		{
			name: "O1 key outside the scope",
			p:    plan(2, 3, unit(keys(ka, kb, kc), 0, 2, full)),
			run:  func(p *model.Plan) error { return p.CheckO1() },
			obl:  "O1", unit: 0, key: kc,
			msg: "O1 unit 1 key k2: key outside the scope",
		},
		{
			name: "O3 missing read",
			p: plan(2, 3, model.Unit{Domain: keys(ka), Lo: 0, Hi: 2, Refresh: full, Read: keys(ka)},
				model.Unit{Domain: keys(kb), Lo: 0, Hi: 2, Refresh: full}),
			run: func(p *model.Plan) error { return p.CheckO3() },
			obl: "O3", unit: 1, key: kb,
			msg: "O3 unit 2 key k1: no read result",
		},
		{
			name: "O2 read matching no in-bracket state",
			// b = 2 only from c2 on; unit 1 brackets (c0, c1].
			p:   plan(2, 3, unit(keys(ka), 0, 3, model.Store{ka: 3}), unit(keys(kb), 0, 1, model.Store{kb: 2})),
			run: func(p *model.Plan) error { return p.CheckO2(&l) },
			obl: "O2", unit: 1, key: kb,
			msg: "O2 unit 2 key k1: read 2 matches σ_c(k1) at no c in [0, 1]",
		},
		{
			name: "O2 a stale value outside the bracket",
			// a = 1 only at c1, c2; unit brackets (c3, c3].
			p:   plan(2, 3, unit(keys(ka, kb), 3, 3, model.Store{ka: 1, kb: 2})),
			run: func(p *model.Plan) error { return p.CheckO2(&l) },
			obl: "O2", unit: 0, key: ka,
			msg: "O2 unit 1 key k0: read 1 matches σ_c(k0) at no c in [3, 3]",
		},
		{
			name: "Check reports brackets before O1",
			p:    plan(3, 1, unit(keys(ka), 0, 2, full)),
			run:  func(p *model.Plan) error { return p.Check(&l) },
			obl:  "bracket", unit: 0, key: model.NoKey,
			msg: "bracket unit 1: bracket 0..2 not within frontier 1",
		},
		{
			name: "Check reports O3 before O2",
			p:    plan(1, 3, model.Unit{Domain: keys(ka), Lo: 0, Hi: 0, Refresh: model.Store{ka: 3}}),
			run:  func(p *model.Plan) error { return p.Check(&l) },
			obl:  "O3", unit: 0, key: ka,
			msg: "O3 unit 1 key k0: no read result",
		},
	}
	for _, tc := range cases {
		err := tc.run(&tc.p)
		if err == nil {
			t.Errorf("%s: no failure", tc.name)
			continue
		}
		f := failure(t, err)
		if f.Obligation != tc.obl || f.Unit != tc.unit || f.Key != tc.key || err.Error() != tc.msg {
			t.Errorf("%s: %+v\n  got  %q\n  want %q", tc.name, *f, err.Error(), tc.msg)
		}
	}
}

// Reference: §3.3 (O2 is per key and existential; a key read as absent before
// its insert is valid) and §3.4 (canonical replay; keys outside every unit).
func TestValidInAndOwner(t *testing.T) {
	l := logOf(t, ev(ka, 1), ev(ka, bot), ev(ka, 1), ev(kb, 2))
	for _, tc := range []struct {
		v      model.Value
		lo, hi model.Coord
		want   bool
	}{
		{bot, 0, 0, true},
		{1, 0, 0, false},
		{1, 0, 1, true},
		{bot, 1, 1, false},
		{bot, 1, 2, true}, // the delete at the high edge counts
		{bot, 2, 3, true}, // the state at the low edge counts
		{bot, 3, 4, false},
		{2, 0, 4, false},
	} {
		if got := model.ValidIn(&l, ka, tc.v, tc.lo, tc.hi); got != tc.want {
			t.Errorf("ValidIn(a, %v, %d, %d) = %v, want %v", tc.v, tc.lo, tc.hi, got, tc.want)
		}
	}
	p := plan(3, 4, unit(keys(ka), 0, 1, model.Store{ka: 1}), unit(keys(kb), 2, 4, model.Store{kb: 2}))
	for k, want := range []int{0, 1, -1} {
		if got := p.Owner(model.Key(k)); got != want {
			t.Errorf("Owner(%d) = %d, want %d", k, got, want)
		}
	}
	if got := p.Sink(&l, 4, kc); got != bot {
		t.Errorf("unowned key sinks to %v", got)
	}
	if p.Scope() != keys(ka, kb, kc) {
		t.Errorf("Scope = %b", p.Scope())
	}
	var empty model.Plan
	if empty.LatestHigh() != 0 || empty.Check(&l) != nil {
		t.Error("the empty plan over the empty scope")
	}
}

// CheckUnits judges a subset of the units in place exactly as the plan of
// those units alone is judged (brackets, O3, O2; O1 is not its business),
// naming the failing unit by its index in the whole plan.
func TestCheckUnitsEqualsSubPlan(t *testing.T) {
	l := logOf(t, ev(ka, 1), ev(kb, 2), ev(ka, 2), ev(kc, 9))
	units := []model.Unit{
		unit(keys(ka), 1, 2, model.Store{ka: 1}),                                          // valid
		unit(keys(kb), 0, 1, model.Store{kb: 2}),                                          // O2 fails: b=2 only from c2
		unit(keys(kc), 3, 9, model.Store{kc: bot}),                                        // bracket past the frontier
		{Domain: keys(ka, kb), Lo: 1, Hi: 3, Refresh: model.Store{ka: 2}, Read: keys(ka)}, // O3 fails: b unread
	}
	var whole model.Plan
	whole.Keys = 3
	for _, u := range units {
		whole.Add(u)
	}
	for mask := uint8(0); mask < 1<<len(units); mask++ {
		var sub model.Plan
		sub.Keys, sub.Frontier = 3, l.Len()
		var index []int
		for i, u := range units {
			if mask&(1<<i) != 0 {
				sub.Add(u)
				index = append(index, i)
			}
		}
		want := sub.CheckBrackets()
		if want == nil {
			want = sub.CheckO3()
		}
		if want == nil {
			want = sub.CheckO2(&l)
		}
		got := whole.CheckUnits(mask, &l, l.Len())
		if (got == nil) != (want == nil) {
			t.Fatalf("mask %04b: CheckUnits = %v, sub-plan = %v", mask, got, want)
		}
		if got == nil {
			continue
		}
		g, w := got.(*model.Failure), *want.(*model.Failure)
		w.Unit = index[w.Unit]
		if *g != w {
			t.Errorf("mask %04b: CheckUnits = %+v, sub-plan = %+v", mask, *g, w)
		}
	}
	if err := whole.CheckUnits(0b0001, &l, l.Len()); err != nil {
		t.Errorf("the valid unit alone: %v", err)
	}
	for i, want := range []string{"", "O2", "bracket", "O3"} {
		got := ""
		if err := whole.CheckUnits(1<<i, &l, l.Len()); err != nil {
			got = err.(*model.Failure).Obligation
		}
		if got != want {
			t.Errorf("unit %d alone fails %q, want %q", i+1, got, want)
		}
	}
}

// Example 4.1's refresh reads a present and b, c absent; a key never read
// is not present whatever its refresh holds (O3 may fail, Present does not
// invent a row).
func TestUnitPresent(t *testing.T) {
	_, p := example41(t)
	u := p.Units[0]
	if got := u.Present(); got != keys(ka) {
		t.Errorf("Present = %v, want {a}", got)
	}
	u.Read = keys(kb, kc)
	if got := u.Present(); got != 0 {
		t.Errorf("a unread: Present = %v, want {}", got)
	}
}
