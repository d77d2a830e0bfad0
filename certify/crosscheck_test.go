package certify

import (
	"bytes"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
)

// The cross-check: every capture over two keys and one value, with logs of
// up to maxLen positions (row events and markers), initial stores with and
// without a row, one or two units (partitioning, partial and overlapping
// domains), every bracket, every read result (row, absence, none), early and
// late consumption starts, frontiers at, before and after the latest high
// edge, and each discipline — written out as a bundle and verified. The
// verdict must be Accept exactly when the model says the run is wellformed
// (the plan obligations, S-OBS, frontier ⊒ every high edge), which by
// Theorem 1 is exactly when the invariants frontier-replay and contract
// hold; a Reject must name the obligation the model finds failing first.

var longCross = flag.Bool("certify.long", false, "cross-check over logs of three positions (two for multi-chunk plans): about 770,000 cases")

// bounds are the log lengths for one-chunk and multi-chunk plans.
func bounds() (long, short int) {
	switch {
	case *longCross:
		return 3, 2
	case raceEnabled || testing.Short():
		return 1, 1
	}
	return 2, 1
}

var alphabet = []model.Event{
	{Key: 0, Img: 1}, {Key: 0, Img: model.Absent},
	{Key: 1, Img: 1}, {Key: 1, Img: model.Absent},
	{Key: model.NoKey},
}

// logs enumerates every log of length ≤ n over the alphabet, one event per
// transaction, over each initial store.
func logs(n int) []model.Log {
	var out []model.Log
	var rec func(l model.Log)
	rec = func(l model.Log) {
		out = append(out, l)
		if int(l.N) == n {
			return
		}
		for _, e := range alphabet {
			m := l
			m.Commit(e)
			rec(m)
		}
	}
	for _, init := range []model.Store{{}, {0: 1}} {
		rec(model.Log{Init: init})
	}
	return out
}

type xcase struct {
	log        model.Log
	plan       model.Plan
	s0, f      model.Coord
	discipline string
}

// domains are the unit layouts over scope {k0, k1}.
var domains = []struct {
	name  string
	units []model.KeySet
}{
	{"one chunk", []model.KeySet{model.Range(0, 2)}},
	{"two chunks", []model.KeySet{model.Range(0, 1), model.Range(1, 2)}},
	{"k1 owned by none", []model.KeySet{model.Range(0, 1)}},
	{"overlapping", []model.KeySet{model.Range(0, 2), model.Range(1, 2)}},
}

// reads are the read results of one key: none, absent, present.
var reads = []struct {
	read bool
	v    model.Value
}{{false, 0}, {true, model.Absent}, {true, 1}}

// enumerate visits every case: one-chunk layouts over logs of up to long
// positions (with brackets outside the log, every start and frontier
// variant and each discipline), multi-chunk layouts over logs of up to short
// positions (every pair of brackets).
func enumerate(long, short int, visit func(xcase)) {
	for _, l := range logs(long) {
		n := l.Len()
		var brackets []model.Window
		for lo := model.Coord(0); lo <= n; lo++ {
			for hi := lo; hi <= n; hi++ {
				brackets = append(brackets, model.Window{Lo: lo, Hi: hi})
			}
		}
		bad := []model.Window{{Lo: n + 1, Hi: n + 1}}
		if n > 0 {
			bad = append(bad, model.Window{Lo: n, Hi: n - 1})
		}
		for _, d := range domains {
			if len(d.units) > 1 && int(n) > short {
				continue
			}
			var rec func(p model.Plan, i int)
			rec = func(p model.Plan, i int) {
				if i == len(d.units) {
					refreshes(l, p, len(d.units) == 1, visit)
					return
				}
				bs := brackets
				if len(d.units) == 1 {
					bs = append(append([]model.Window(nil), brackets...), bad...)
				}
				for _, w := range bs {
					q := p
					q.Add(model.Unit{Domain: d.units[i], Lo: w.Lo, Hi: w.Hi})
					rec(q, i+1)
				}
			}
			rec(model.Plan{Keys: 2}, 0)
		}
	}
}

func refreshes(l model.Log, p model.Plan, variants bool, visit func(xcase)) {
	for _, r0 := range reads {
		for _, r1 := range reads {
			q := p
			for i := 0; i < int(q.N); i++ {
				u := &q.Units[i]
				u.Read, u.Refresh = 0, model.Store{}
				for k, r := range [2]struct {
					read bool
					v    model.Value
				}{r0, r1} {
					if key := model.Key(k); u.Domain.Has(key) && r.read {
						u.Read = u.Read.With(key)
						u.Refresh[key] = r.v
					}
				}
			}
			starts(l, q, variants, visit)
		}
	}
}

func starts(l model.Log, p model.Plan, variants bool, visit func(xcase)) {
	n := l.Len()
	minLo := n
	for i := 0; i < int(p.N); i++ {
		minLo = min(minLo, p.Units[i].Lo)
	}
	hi := p.LatestHigh()
	s0s := []model.Coord{0}
	if variants && minLo+1 <= n {
		s0s = append(s0s, minLo+1) // after a low edge: late for window-discard
	}
	fs := []model.Coord{n}
	if variants && hi <= n && hi != n {
		fs = append(fs, hi)
	}
	if variants && hi > 0 && hi-1 <= n && hi-1 != n {
		fs = append(fs, hi-1) // before the latest high edge
	}
	for _, s0 := range s0s {
		for _, f := range fs {
			if s0 > f {
				continue
			}
			for _, d := range []string{WindowDiscard, RangeMerge, PointSplice} {
				visit(xcase{log: l, plan: p, s0: s0, f: f, discipline: d})
			}
		}
	}
}

// expect is the model's verdict on a case: "" for a wellformed run, else the
// clause of the first obligation that fails, in the verifier's order.
func expect(c *xcase) string {
	p, l := c.plan, &c.log
	p.Frontier = c.f
	n := int(p.N)
	for i := 0; i < n; i++ {
		if u := p.Units[i]; u.Lo > u.Hi || u.Hi > l.Len() {
			return "bracket"
		}
	}
	if c.f < p.LatestHigh() || c.f > l.Len() {
		return "frontier"
	}
	for i := 0; i < n; i++ {
		u := p.Units[i]
		if c.discipline == RangeMerge && c.s0 > u.Hi || c.discipline != RangeMerge && c.s0 > u.Lo {
			return "S-OBS"
		}
	}
	if c.discipline == PointSplice {
		for i := 0; i < n; i++ {
			if p.Units[i].Lo != p.Units[i].Hi {
				return "point-splice"
			}
		}
	}
	if err := p.CheckO1(); err != nil {
		return "O1"
	}
	if err := p.CheckO3(); err != nil {
		return "O3"
	}
	if err := p.CheckO2(l); err != nil {
		return "O2"
	}
	return ""
}

func (c *xcase) stream() model.Stream {
	p := c.plan
	p.Frontier = c.f
	switch c.discipline {
	case RangeMerge:
		return model.RangeMerge(&p, &c.log, c.s0, c.f)
	case PointSplice:
		if s, ok := model.PointSplice(&p, &c.log, c.s0, c.f); ok {
			return s
		}
	}
	return model.WindowDiscard(&p, &c.log, c.s0, c.f)
}

// capture is the state a protocol model would hold once every unit closed.
func (c *xcase) capture(s model.Stream) model.Capture {
	cp := model.Capture{Log: c.log, Plan: c.plan, Pos: c.f, Start: c.s0, Closed: uint8(1)<<c.plan.N - 1}
	for _, e := range s {
		cp.Emit(e.Key, e.Val, e.Tag)
	}
	return cp
}

func (c *xcase) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s s0=%d f=%d init=%v log=[", c.discipline, c.s0, c.f, c.log.Init[:2])
	for i := model.Coord(1); i <= c.log.Len(); i++ {
		e := c.log.At(i)
		fmt.Fprintf(&b, " %v:=%v", e.Key, e.Img)
	}
	b.WriteString(" ] units:")
	for i := 0; i < int(c.plan.N); i++ {
		u := c.plan.Units[i]
		fmt.Fprintf(&b, " {dom=%b (%d,%d] read=%b R=%v}", u.Domain, u.Lo, u.Hi, u.Read, u.Refresh[:2])
	}
	return b.String()
}

var clauseOf = map[string]string{
	"bracket":      "brackets inside the log",
	"frontier":     "frontier at or after every high edge",
	"S-OBS":        "S-OBS",
	"point-splice": "point-splice brackets",
	"O1":           "O1 chunk partition",
	"O3":           "O3 refresh totality",
	"O2":           "O2 bracket-local validity",
}

// Reference: 003 §9 (accepted certificates are virtual cuts), main paper
// Thm 1, Def. 6.2–6.4, Cor. 4; every case, not a sample.
func TestCrossCheckModel(t *testing.T) {
	long, short := bounds()
	var cases, accepted int
	byClause := map[string]int{}
	var buf bytes.Buffer
	enumerate(long, short, func(c xcase) {
		cases++
		s := c.stream()
		want := expect(&c)
		buf.Reset()
		if err := WriteModelBundle(&buf, ModelRun{Log: &c.log, Plan: &c.plan, Start: c.s0, Frontier: c.f, Discipline: c.discipline, Stream: s}); err != nil {
			t.Fatal(err)
		}
		res, err := Verify(bytes.NewReader(buf.Bytes()), Options{})
		if err != nil {
			t.Fatal(err)
		}
		// The invariants the protocol models check, on the same state.
		cp := c.capture(s)
		invOK := invariants.CheckContract(&cp, int(c.plan.N)) == "" && invariants.CheckFrontierReplay(&cp, int(c.plan.N)) == ""
		if want == "" {
			accepted++
			if res.Verdict != Accept {
				t.Fatalf("%v\nmodel: wellformed; certify: %s", &c, res.Line())
			}
			// Theorem 1 through the discipline, as the model computes it.
			if got, sigma := s.Replay(), c.log.State(c.f); got[0] != sigma[0] || got[1] != sigma[1] || !invOK {
				t.Fatalf("%v\naccepted but replay %v ≠ σ_f %v (invariants %v)", &c, got[:2], sigma[:2], invOK)
			}
			return
		}
		byClause[want]++
		if res.Verdict != Reject || !strings.Contains(res.Failure.Clause, clauseOf[want]) {
			t.Fatalf("%v\nmodel: %s fails; certify: %s", &c, want, res.Line())
		}
		// Accept ⇔ contract ∧ frontier-replay ∧ the run's own preconditions.
		if invOK && want != "frontier" && want != "S-OBS" && want != "point-splice" {
			t.Fatalf("%v\nthe invariants hold but %s fails", &c, want)
		}
	})
	t.Logf("%d cases: %d accepted, rejected by clause %v", cases, accepted, byClause)
	for _, clause := range []string{"bracket", "frontier", "S-OBS", "point-splice", "O1", "O3", "O2"} {
		if byClause[clause] == 0 {
			t.Errorf("no case fails %s: the enumeration is too small to test it", clause)
		}
	}
}

// A mutated emitter: the lawful one of model/discipline.go with the natural
// implementation mistakes of mutations/ as switches.
type emitter struct {
	pass       func(p *model.Plan, i int, pos model.Coord) bool
	close      func(l *model.Log, u *model.Unit, w model.Window, k model.Key) (model.Value, bool)
	window     func(u *model.Unit) model.Window // the window the capture believes in
	earlyClose bool                             // a unit closes before its high event is processed
}

func (m emitter) emit(p *model.Plan, l *model.Log, s0, f model.Coord) model.Stream {
	var out model.Stream
	var closed [model.MaxUnits]bool
	closeUpTo := func(pos model.Coord) {
		for i := 0; i < int(p.N); i++ {
			u := &p.Units[i]
			if closed[i] || u.Hi >= pos {
				continue
			}
			closed[i] = true
			for k := model.Key(0); k < model.Key(model.MaxKeys); k++ {
				if u.Domain.Has(k) {
					if v, ok := m.close(l, u, m.window(u), k); ok {
						out = append(out, model.Entry{Key: k, Val: v, Tag: u.Hi})
					}
				}
			}
		}
	}
	for pos := s0 + 1; pos <= f; pos++ {
		if m.earlyClose {
			closeUpTo(pos + 1)
		} else {
			closeUpTo(pos)
		}
		e := l.At(pos)
		if e.Key == model.NoKey {
			continue
		}
		if i := p.Owner(e.Key); i >= 0 && !m.pass(p, i, pos) {
			continue
		}
		out = append(out, model.Entry{Key: e.Key, Val: e.Img, Tag: pos})
	}
	closeUpTo(f + 1)
	return out
}

func always(*model.Plan, int, model.Coord) bool { return true }

func beyondHigh(p *model.Plan, i int, pos model.Coord) bool { return pos > p.Units[i].Hi }

func survivor(l *model.Log, u *model.Unit, w model.Window, k model.Key) (model.Value, bool) {
	return u.Refresh[k], u.Refresh[k] != model.Absent && !l.Touches(k, w)
}

func mergedIn(l *model.Log, u *model.Unit, w model.Window, k model.Key) (model.Value, bool) {
	v := u.Refresh[k]
	if img, _, ok := l.Last(k, w); ok {
		v = img
	}
	return v, v != model.Absent
}

func ownWindow(u *model.Unit) model.Window { return u.Window() }

var lawful = map[string]emitter{
	WindowDiscard: {pass: always, close: survivor, window: ownWindow},
	RangeMerge:    {pass: beyondHigh, close: mergedIn, window: ownWindow},
}

// mutants are the stream-side faults of mutations/ (and Proposition 3), by
// discipline; each must be caught as a prefix that is not the discipline's.
// Early-release and gate-repeats-window break closed-unit-cut and
// monotonicity mid-run in the protocols; here, at rest, they only reorder or
// repeat entries, which the prefix check still rejects.
var mutants = []struct {
	name, discipline string
	e                emitter
}{
	{"no-discard", WindowDiscard, emitter{pass: always, window: ownWindow,
		close: func(_ *model.Log, u *model.Unit, _ model.Window, k model.Key) (model.Value, bool) {
			return u.Refresh[k], u.Refresh[k] != model.Absent
		}}},
	{"early-release", WindowDiscard, emitter{pass: always, close: survivor, window: ownWindow, earlyClose: true}},
	{"low-edge-off-by-one", WindowDiscard, emitter{pass: always, close: survivor,
		window: func(u *model.Unit) model.Window { return model.Window{Lo: u.Lo + 1, Hi: u.Hi} }}},
	{"high-edge-off-by-one", WindowDiscard, emitter{pass: always, close: survivor,
		window: func(u *model.Unit) model.Window { return model.Window{Lo: u.Lo, Hi: max(u.Lo, u.Hi-1)} }}},
	{"gate-drops-boundary", RangeMerge, emitter{close: mergedIn, window: ownWindow,
		pass: func(p *model.Plan, i int, pos model.Coord) bool { return pos > p.Units[i].Hi+1 }}},
	{"gate-repeats-window", RangeMerge, emitter{close: mergedIn, window: ownWindow,
		pass: func(p *model.Plan, i int, pos model.Coord) bool {
			lowest := p.Units[0].Hi
			for j := 1; j < int(p.N); j++ {
				lowest = min(lowest, p.Units[j].Hi)
			}
			return pos > lowest
		}}},
	{"skipped-backfill", RangeMerge, emitter{pass: beyondHigh, window: ownWindow,
		close: func(_ *model.Log, u *model.Unit, _ model.Window, k model.Key) (model.Value, bool) {
			return u.Refresh[k], u.Refresh[k] != model.Absent
		}}},
	{"window-only-withholding", RangeMerge, emitter{close: mergedIn, window: ownWindow,
		pass: func(p *model.Plan, i int, pos model.Coord) bool { return !p.Units[i].Window().Contains(pos) }}},
}

// Reference: DESIGN.md "Mutations", main paper Prop 3 and §6; 003 §9.4
// (evidence of a faulty run is rejected). For every wellformed case, each
// mutated emitter's stream is written as the run's prefix: it must be
// accepted exactly when it equals the lawful stream, and every counterexample
// (its replay differs from σ_f, so frontier-replay fails) must be rejected
// as a prefix the discipline does not emit.
func TestCrossCheckMutations(t *testing.T) {
	long, short := bounds()
	killed, broken := map[string]int{}, map[string]int{}
	atRest := map[string]bool{"no-discard": true, "low-edge-off-by-one": true, "high-edge-off-by-one": true,
		"gate-drops-boundary": true, "skipped-backfill": true, "window-only-withholding": true}
	var buf bytes.Buffer
	enumerate(long, short, func(c xcase) {
		if c.discipline == PointSplice || expect(&c) != "" {
			return
		}
		p := c.plan
		p.Frontier = c.f
		good := c.stream()
		if own := lawful[c.discipline].emit(&p, &c.log, c.s0, c.f); !streamEqual(own, good) {
			t.Fatalf("%v\nthe test's lawful emitter gives %v, model gives %v", &c, own, good)
		}
		for _, m := range mutants {
			if m.discipline != c.discipline {
				continue
			}
			s := m.e.emit(&p, &c.log, c.s0, c.f)
			buf.Reset()
			if err := WriteModelBundle(&buf, ModelRun{Log: &c.log, Plan: &c.plan, Start: c.s0, Frontier: c.f, Discipline: c.discipline, Stream: s}); err != nil {
				t.Fatal(err)
			}
			res, err := Verify(bytes.NewReader(buf.Bytes()), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if streamEqual(s, good) {
				if res.Verdict != Accept {
					t.Fatalf("%s %v\nthe mutant emits the lawful stream but certify says %s", m.name, &c, res.Line())
				}
				continue
			}
			if res.Verdict != Reject || !strings.Contains(res.Failure.Clause, "emission") {
				t.Fatalf("%s %v\nstream %v ≠ %v; certify: %s", m.name, &c, s, good, res.Line())
			}
			killed[m.name]++
			cp := c.capture(s)
			if invariants.CheckFrontierReplay(&cp, int(c.plan.N)) != "" {
				broken[m.name]++
			}
		}
	})
	t.Logf("mutated streams rejected, by mutation: %v; of them breaking frontier-replay: %v", killed, broken)
	for _, m := range mutants {
		if raceEnabled || testing.Short() {
			break
		}
		if killed[m.name] == 0 || atRest[m.name] && broken[m.name] == 0 {
			t.Errorf("%s: no counterexample at these bounds", m.name)
		}
	}
}

func streamEqual(a, b model.Stream) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Reference: 003 §5.3 (chunks are key ranges), main paper §7.4 and
// Theorem 7. The same enumeration written two other ways: with the scope
// and domains as key ranges — a range read is total, so an unread key was
// observed absent, and the model's verdict is that of the plan reading ⊥
// there — and with brackets as executed-set samples G(lo), G(hi), which
// denote no prefix when they reach past the log (S2).
func TestCrossCheckVariants(t *testing.T) {
	long, short := 1, 1
	switch {
	case *longCross:
		long, short = bounds()
	case raceEnabled || testing.Short():
		long, short = 1, 0
	}
	var buf bytes.Buffer
	cases := 0
	enumerate(long, short, func(c xcase) {
		cases++
		s := c.stream()
		// Ranges: reads are total.
		total := c
		for i := 0; i < int(total.plan.N); i++ {
			total.plan.Units[i].Read = total.plan.Units[i].Domain
		}
		// Executed sets: a bracket past the log is no prefix at all.
		exec := expect(&c)
		for i := 0; i < int(c.plan.N); i++ {
			if u := c.plan.Units[i]; u.Lo > c.log.Len() || u.Hi > c.log.Len() {
				exec = "S2"
			}
		}
		for _, v := range []struct {
			name           string
			ranges, execed bool
			want           string
		}{
			{"ranges", true, false, expect(&total)},
			{"executed-set", false, true, exec},
		} {
			buf.Reset()
			if err := WriteModelBundle(&buf, ModelRun{Log: &c.log, Plan: &c.plan, Start: c.s0, Frontier: c.f, Discipline: c.discipline, Stream: s,
				Ranges: v.ranges, ExecutedSet: v.execed}); err != nil {
				t.Fatal(err)
			}
			res, err := Verify(bytes.NewReader(buf.Bytes()), Options{})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case v.want == "":
				if res.Verdict != Accept {
					t.Fatalf("%s %v\nmodel: wellformed; certify: %s", v.name, &c, res.Line())
				}
			case v.want == "S2":
				if res.Verdict != Reject || res.Failure.Obligation != "S2" {
					t.Fatalf("%s %v\nmodel: no prefix; certify: %s", v.name, &c, res.Line())
				}
			default:
				if res.Verdict != Reject || !strings.Contains(res.Failure.Clause, clauseOf[v.want]) {
					t.Fatalf("%s %v\nmodel: %s fails; certify: %s", v.name, &c, v.want, res.Line())
				}
			}
		}
	})
	t.Logf("%d cases, each as ranges and as executed-set samples", cases)
}

// grouped is l with positions 1 and 2 committed as one transaction.
func grouped(l model.Log) (model.Log, bool) {
	if l.Len() < 2 {
		return l, false
	}
	g := model.Log{Init: l.Init}
	g.Commit(l.At(1), l.At(2))
	for p := model.Coord(3); p <= l.Len(); p++ {
		g.Commit(l.At(p))
	}
	return g, true
}

// Reference: 003 §5.3–§5.4, §11.3; main paper §2.2, §7.4. The
// cross-check's cases in the other forms a recorded run takes (a sample of
// them, to stay fast): string keys give the integer keys' verdict; with
// survivor-only reads an Accept of all reads stays an Accept and every
// Accept is σ_f; an unknown base (from reads) accepts every wellformed run,
// with the same cut; a restriction to one key accepts when the whole does,
// reports the whole's verdict, and any cut it accepts is σ_f there; a log
// whose first two events are one transaction certifies in position
// coordinates as before, and in executed-set coordinates exactly when every
// coordinate of the run is also a transaction boundary.
func TestCrossCheckForms(t *testing.T) {
	every := 53
	if raceEnabled || testing.Short() {
		every = 157
	}
	seen, cases, txns, split := 0, 0, 0, 0
	var buf bytes.Buffer
	write := func(c *xcase, ranges, exec bool) []byte {
		buf.Reset()
		if err := WriteModelBundle(&buf, ModelRun{Log: &c.log, Plan: &c.plan, Start: c.s0, Frontier: c.f, Discipline: c.discipline, Stream: c.stream(), Ranges: ranges, ExecutedSet: exec}); err != nil {
			t.Fatal(err)
		}
		return bytes.Clone(buf.Bytes())
	}
	isSigma := func(c *xcase, res *Result, keys ...model.Key) bool {
		sigma := c.log.State(c.f)
		for _, k := range keys {
			if orNull(res.Cut.State[fmt.Sprint(int(k))]) != modelValue(sigma[k]) {
				return false
			}
		}
		return true
	}
	// grouping keeps a case's coordinates, when the bracket edges are
	// boundaries of the grouped log (a sample names a boundary; an edge
	// inside the transaction would be written as another run).
	grouping := func(c *xcase) (g model.Log, ok, closed bool) {
		if g, ok = grouped(c.log); !ok {
			return g, false, false
		}
		for i := 0; i < int(c.plan.N); i++ {
			if u := c.plan.Units[i]; !g.Boundary(u.Lo) || !g.Boundary(u.Hi) || u.Hi > g.Len() {
				return g, false, false
			}
		}
		return g, true, g.Boundary(c.f) && g.Boundary(c.s0)
	}
	enumerate(2, 1, func(c xcase) {
		want := expect(&c)
		_, ok, closed := grouping(&c)
		// The sample, and every wellformed run whose frontier or start
		// the grouping puts inside a transaction (they are few).
		if seen++; seen%every != 0 && !(ok && want == "" && !closed) {
			return
		}
		cases++
		b := write(&c, false, false)
		res := verifyBytes(t, b, Options{KeepState: true})
		if (res.Verdict == Accept) != (want == "") {
			t.Fatalf("%v\nmodel %q, certify %s", &c, want, res.Line())
		}
		// String keys.
		if s := verifyBytes(t, stringKeys(b), Options{}); s.Verdict != res.Verdict || s.Failure != nil && s.Failure.Clause != res.Failure.Clause {
			t.Fatalf("%v\nstring keys: %s; integer keys: %s", &c, s.Line(), res.Line())
		}
		// An unknown base.
		if fr := verifyBytes(t, fromReads(b), Options{KeepState: true}); want == "" && (fr.Verdict != Accept || fr.Cut.Digest != res.Cut.Digest) {
			t.Fatalf("%v\nfrom reads: %s; complete base: %s", &c, fr.Line(), res.Line())
		}
		// Survivor-only reads, over ranges (reads are total there).
		if c.discipline == WindowDiscard {
			all := verifyBytes(t, write(&c, true, false), Options{})
			sv := verifyBytes(t, survivorsOnly(write(&c, true, false), &c), Options{KeepState: true})
			if all.Verdict == Accept && sv.Verdict != Accept || sv.Verdict == Accept && !isSigma(&c, sv, 0, 1) {
				t.Fatalf("%v\nsurvivors: %s; all reads: %s", &c, sv.Line(), all.Line())
			}
		}
		// Restriction to one key.
		for _, k := range []model.Key{0, 1} {
			rs := verifyBytes(t, b, Options{Restrict: keysScope(fmt.Sprint(int(k))), KeepState: true})
			switch {
			case want == "" && rs.Verdict != Accept:
				t.Fatalf("%v\nrestricted to k%d: %s", &c, k, rs.Line())
			case rs.Verdict == Accept && (rs.Full == nil || rs.Full.Verdict != res.Verdict || !isSigma(&c, rs, k)):
				t.Fatalf("%v\nrestricted to k%d: %s (full %s)", &c, k, rs.Line(), res.Line())
			}
		}
		// Multi-event transactions.
		g, ok, closed := grouping(&c)
		if !ok {
			return
		}
		d := c
		d.log = g
		if pos := verifyBytes(t, write(&d, false, false), Options{}); pos.Verdict != res.Verdict {
			t.Fatalf("%v\none transaction at 1–2: %s; before: %s", &d, pos.Line(), res.Line())
		}
		if ex := verifyBytes(t, write(&d, false, true), Options{}); (ex.Verdict == Accept) != (want == "" && closed) {
			t.Fatalf("%v\nexecuted-set, one transaction at 1–2 (frontier and start boundaries: %v): %s", &d, closed, ex.Line())
		}
		txns++
		if want == "" && !closed {
			split++
		}
	})
	if txns == 0 || split == 0 {
		t.Fatalf("%d cases, %d with a two-event transaction, %d of them wellformed but split: too few", cases, txns, split)
	}
	t.Logf("%d cases in every form, %d with a two-event transaction (%d wellformed runs split it)", cases, txns, split)
}

// sampled visits one case in every of the enumeration at the given
// bounds, each written as a bundle with key-list and with range domains.
func sampled(t testing.TB, long, short, every int, visit func(c *xcase, ranges bool, b []byte)) {
	var buf bytes.Buffer
	seen := 0
	enumerate(long, short, func(c xcase) {
		if seen++; seen%every != 0 {
			return
		}
		for _, ranges := range []bool{false, true} {
			buf.Reset()
			if err := WriteModelBundle(&buf, ModelRun{Log: &c.log, Plan: &c.plan, Start: c.s0, Frontier: c.f, Discipline: c.discipline, Stream: c.stream(), Ranges: ranges}); err != nil {
				t.Fatal(err)
			}
			visit(&c, ranges, bytes.Clone(buf.Bytes()))
		}
	})
}
