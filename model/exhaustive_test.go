package model_test

import (
	"testing"

	"github.com/cutcheck/cutcheck/model"
)

// Exhaustive bounds: logs of at most 3 events over keys {0, 1} with images in
// {⊥, 1, 2}, cut into transactions of 1 or 2 events; plans of one unit over
// {0, 1} or two units {0}, {1}; every bracket lo ≤ hi ≤ f for every frontier
// f in 0..len; every refresh in {⊥, 1, 2}^domain, read in full (O3 holds).
//
// Logs: a log of n events has 6^n event choices and F(n+1) ways to cut it
// into 1- and 2-event transactions (F Fibonacci: 1, 1, 2, 3), so
//
//	1 + 6 + 2·36 + 3·216 = 727 logs.
//
// Plans: at frontier f there are B(f) = (f+1)(f+2)/2 brackets, so 9·B(f)
// one-unit plans and 3·B(f)·3·B(f) two-unit plans: 9·B(f)·(1+B(f)) = 18, 108,
// 378, 990 for f = 0..3. Per log of length n = 0..3 that is 18, 126, 504,
// 1494 plans, and over all logs
//
//	18 + 6·126 + 72·504 + 648·1494 = 1 005 174 plans,
//
// of which 176 010 satisfy Plan.Check (counted again below by a separate
// count: a refresh passes O2 iff each key's value is among the distinct
// values σ_c(k) takes for c in the bracket). The other 829 164 fail O2 only.
//
// Under the race detector plans are enumerated over the 259 logs of
// one-event transactions only (transaction labels enter no plan function):
// 18 + 6·126 + 36·504 + 216·1494 = 341 622 plans, 59 670 valid.
const (
	wantLogs           = 727
	wantPlans          = 1005174
	wantValidPlans     = 176010
	wantRacePlans      = 341622
	wantRaceValidPlans = 59670
)

type bracket struct{ lo, hi model.Coord }

// compositions lists the ways to cut n events into transactions of 1 or 2.
func compositions(n int) [][]int {
	if n == 0 {
		return [][]int{nil}
	}
	var out [][]int
	for _, first := range []int{1, 2} {
		if first > n {
			continue
		}
		for _, rest := range compositions(n - first) {
			out = append(out, append([]int{first}, rest...))
		}
	}
	return out
}

func allLogs(t testing.TB, maxLen int) []model.Log {
	var logs []model.Log
	for n := 0; n <= maxLen; n++ {
		choices := 1
		for i := 0; i < n; i++ {
			choices *= 6
		}
		for code := 0; code < choices; code++ {
			events := make([]model.Event, n)
			d := code
			for i := range events {
				events[i] = ev(model.Key(d%6/3), model.Value(d%3))
				d /= 6
			}
			for _, comp := range compositions(n) {
				var l model.Log
				at := 0
				for _, size := range comp {
					if !l.Commit(events[at : at+size]...) {
						t.Fatal("commit refused")
					}
					at += size
				}
				logs = append(logs, l)
			}
		}
	}
	return logs
}

// fold is σ_c(k) for every c, computed afresh from the events.
func fold(l *model.Log) (s [model.MaxLog + 1][2]model.Value) {
	for c := 1; c <= int(l.N); c++ {
		s[c] = s[c-1]
		e := l.Ev[c-1]
		s[c][e.Key] = e.Img
	}
	return s
}

// Reference: Theorem 1, Lemma 4.1, Lemma 4.2, Lemma 4.3, Corollary 1,
// Corollary 2, Theorems 2–5, Lemma 6.2, Proposition 3 and Theorem 7, checked
// exhaustively over the bounds above; and that the contract is sufficient
// (every plan breaking Theorem 1 fails Check) while O2 is needed (dropping it
// alone breaks Theorem 1 for some plan).
func TestExhaustive(t *testing.T) {
	logs := allLogs(t, 3)
	if len(logs) != wantLogs {
		t.Fatalf("%d logs, want %d", len(logs), wantLogs)
	}
	fib := []int{1, 1, 2, 3}
	closedLogs, closedPlans, closedRacePlans := 0, 0, 0
	for n, pow := 0, 1; n <= 3; n, pow = n+1, pow*6 {
		perLog := 0
		for f := 0; f <= n; f++ {
			b := (f + 1) * (f + 2) / 2
			perLog += 9 * b * (1 + b)
		}
		closedLogs += fib[n] * pow
		closedPlans += fib[n] * pow * perLog
		closedRacePlans += pow * perLog
	}
	if closedLogs != wantLogs || closedPlans != wantPlans || closedRacePlans != wantRacePlans {
		t.Fatalf("closed forms: %d logs, %d plans, %d one-event-transaction plans", closedLogs, closedPlans, closedRacePlans)
	}
	expectPlans, expectValid := wantPlans, wantValidPlans
	if raceEnabled {
		expectPlans, expectValid = wantRacePlans, wantRaceValidPlans
	}

	refreshes := map[model.KeySet][]model.Store{}
	for _, dom := range []model.KeySet{keys(0, 1), keys(0), keys(1)} {
		rs := []model.Store{{}}
		for k := model.Key(0); k < 2; k++ {
			if !dom.Has(k) {
				continue
			}
			var next []model.Store
			for _, r := range rs {
				for v := model.Value(0); v <= 2; v++ {
					r[k] = v
					next = append(next, r)
				}
			}
			rs = next
		}
		refreshes[dom] = rs
	}
	partitions := [][]model.KeySet{{keys(0, 1)}, {keys(0), keys(1)}}

	var total, valid, counted, onlyO2, o2Broken, narrowedWrong int
	for li := range logs {
		l := &logs[li]
		n := l.Len()
		sigma := fold(l)
		exhaustiveTheorem7(t, l)
		if raceEnabled && l.Txns() != uint8(n) {
			continue
		}

		for f := model.Coord(0); f <= n; f++ {
			var brs []bracket
			for hi := model.Coord(0); hi <= f; hi++ {
				for lo := model.Coord(0); lo <= hi; lo++ {
					brs = append(brs, bracket{lo, hi})
				}
			}
			// The separate count of valid plans.
			distinct := func(k int, br bracket) int {
				var seen [3]bool
				d := 0
				for c := br.lo; c <= br.hi; c++ {
					if v := sigma[c][k]; !seen[v] {
						seen[v] = true
						d++
					}
				}
				return d
			}
			sum0, sum1 := 0, 0
			for _, br := range brs {
				counted += distinct(0, br) * distinct(1, br)
				sum0 += distinct(0, br)
				sum1 += distinct(1, br)
			}
			counted += sum0 * sum1

			visit := func(p *model.Plan) {
				total++
				err := p.Check(l)
				sinkF := p.SinkState(l, f)
				thm1 := sinkF == l.State(f)
				if err != nil {
					if fl, ok := err.(*model.Failure); !ok || fl.Obligation != "O2" {
						t.Fatalf("log %v plan %+v: %v, but only O2 can fail here", l.Ev[:n], p.Units[:p.N], err)
					}
					onlyO2++
					if !thm1 {
						o2Broken++
					}
					return
				}
				valid++
				checkValidPlan(t, l, p, f, sigma, sinkF)
				if model.WindowNarrowed(p, l, 0, f).Replay() != sinkF {
					narrowedWrong++
				}
			}

			for _, part := range partitions {
				p := model.Plan{Keys: 2, Frontier: f, N: uint8(len(part))}
				var rec func(i int)
				rec = func(i int) {
					if i == len(part) {
						visit(&p)
						return
					}
					for _, br := range brs {
						for _, r := range refreshes[part[i]] {
							p.Units[i] = model.Unit{Domain: part[i], Lo: br.lo, Hi: br.hi, Refresh: r, Read: part[i]}
							rec(i + 1)
						}
					}
				}
				rec(0)
			}
		}
	}
	t.Logf("%d logs, %d plans: %d valid, %d failing O2 only (%d of them break Theorem 1); window-narrowed wrong on %d valid plans",
		len(logs), total, valid, onlyO2, o2Broken, narrowedWrong)
	if total != expectPlans || valid != expectValid || counted != expectValid || onlyO2 != expectPlans-expectValid {
		t.Errorf("plans %d (want %d), valid %d, separately counted %d (want %d), O2-only %d",
			total, expectPlans, valid, counted, expectValid, onlyO2)
	}
	if o2Broken == 0 {
		t.Error("no plan failing only O2 breaks Theorem 1: O2 would be unnecessary")
	}
	if narrowedWrong == 0 {
		t.Error("window-narrowing never replays wrongly (Proposition 3)")
	}
}

// checkValidPlan checks every claim the paper makes about a plan satisfying
// the contract at frontier f.
func checkValidPlan(t *testing.T, l *model.Log, p *model.Plan, f model.Coord, sigma [model.MaxLog + 1][2]model.Value, sinkF model.Store) {
	n := l.Len()
	fail := func(claim string, args ...any) {
		t.Fatalf("%s; log %v, frontier %d, plan %+v, details %v", claim, l.Ev[:n], f, p.Units[:p.N], args)
	}
	// Theorem 1.
	if sinkF != l.State(f) {
		fail("Theorem 1", sinkF, l.State(f))
	}
	// Lemma 4.3 (and Corollary 2 past f): a closed unit's keys are exact.
	for g := model.Coord(0); g <= n; g++ {
		for k := model.Key(0); k < 2; k++ {
			if u := &p.Units[p.Owner(k)]; u.Hi <= g && p.Sink(l, g, k) != l.Sigma(g, k) {
				fail("Lemma 4.3", g, k)
			}
		}
	}
	// Lemma 4.2 and Corollary 2.
	if g, k, ok := p.Trajectory(l, p.LatestHigh(), f); !ok {
		fail("Lemma 4.2", g, k)
	}
	if g, k, ok := p.Trajectory(l, f, n); !ok {
		fail("Corollary 2", g, k)
	}
	// Corollary 1, with the witnesses recomputed from their definition.
	ws := p.SharedWitnesses(l)
	for c := model.Coord(0); c <= n; c++ {
		shared := true
		for i := 0; i < int(p.N); i++ {
			u := &p.Units[i]
			if c < u.Lo || c > u.Hi {
				shared = false
			}
			for k := model.Key(0); k < 2; k++ {
				if u.Domain.Has(k) && u.Refresh[k] != sigma[c][k] {
					shared = false
				}
			}
		}
		if ws.Has(c) != shared {
			fail("SharedWitnesses", c, shared)
		}
		if shared {
			if g, k, ok := p.Trajectory(l, c, f); !ok {
				fail("Corollary 1", c, g, k)
			}
		}
	}
	minLo, minHi := f, f
	for i := 0; i < int(p.N); i++ {
		minLo, minHi = min(minLo, p.Units[i].Lo), min(minHi, p.Units[i].Hi)
		for k := model.Key(0); k < 2; k++ {
			if p.Units[i].Domain.Has(k) && p.Units[i].Merged(l, k) != l.Sigma(p.Units[i].Hi, k) {
				fail("Lemma 6.2", i, k)
			}
		}
	}
	// exact: every entry's value is the key's state at its tag (Thm 3, Thm 5
	// with Lemmas 4.1 and 6.2).
	exact := func(s model.Stream) bool {
		for _, e := range s {
			if e.Val != l.Sigma(e.Tag, e.Key) {
				return false
			}
		}
		return true
	}
	// Theorems 2 and 3.
	for s0 := model.Coord(0); s0 <= minLo; s0++ {
		s := model.WindowDiscard(p, l, s0, f)
		if s.Replay() != sinkF {
			fail("Theorem 2", s0, s)
		}
		if ok, _ := s.Monotone(); !ok || !exact(s) {
			fail("Theorem 3", s0, s)
		}
	}
	// Theorems 4 and 5.
	for s0 := model.Coord(0); s0 <= minHi; s0++ {
		s := model.RangeMerge(p, l, s0, f)
		if s.Replay() != sinkF {
			fail("Theorem 4", s0, s)
		}
		if ok, _ := s.Monotone(); !ok || !exact(s) {
			fail("Theorem 5", s0, s)
		}
	}
	// Point splice is window-discard over point brackets (§6.4).
	point := true
	for i := 0; i < int(p.N); i++ {
		point = point && p.Units[i].Lo == p.Units[i].Hi
	}
	if s, ok := model.PointSplice(p, l, 0, f); ok != point || (ok && !streamEqual(s, model.WindowDiscard(p, l, 0, f))) {
		fail("PointSplice", ok, s)
	}
}

// exhaustiveTheorem7 checks Theorem 7 on one log: a coordinate is a boundary
// iff no transaction has positions on both sides of it; between boundaries
// the sampled membership test is exactly the window; a sample taken at a
// non-boundary c admits position c+1, outside (0, c].
func exhaustiveTheorem7(t *testing.T, l *model.Log) {
	t.Helper()
	n := l.Len()
	var boundaries []model.Coord
	for c := model.Coord(0); c <= n; c++ {
		boundary := true
		for p := model.Coord(1); p <= c; p++ {
			for q := c + 1; q <= n; q++ {
				if l.At(p).Txn == l.At(q).Txn {
					boundary = false
				}
			}
		}
		if l.Boundary(c) != boundary {
			t.Fatalf("log %v: Boundary(%d) = %v", l.Ev[:n], c, !boundary)
		}
		if boundary {
			boundaries = append(boundaries, c)
		} else if !l.InSampledWindow(c+1, l.Executed(0), l.Executed(c)) || (model.Window{Lo: 0, Hi: c}).Contains(c+1) {
			t.Fatalf("log %v: a sample at non-boundary %d did not leak position %d", l.Ev[:n], c, c+1)
		}
	}
	for _, lo := range boundaries {
		for _, hi := range boundaries {
			if lo > hi {
				continue
			}
			w := model.Window{Lo: lo, Hi: hi}
			for p := model.Coord(1); p <= n; p++ {
				if l.InSampledWindow(p, l.Executed(lo), l.Executed(hi)) != w.Contains(p) {
					t.Fatalf("log %v: Theorem 7 fails at p=%d for %v", l.Ev[:n], p, w)
				}
			}
		}
	}
}
