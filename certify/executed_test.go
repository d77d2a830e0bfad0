package certify

import (
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/model"
)

// executedRun is a read-only capture (main paper §7.4): multi-row
// transactions, and a bracket given as two samples of the executed set.
//
//	T1: p1 k0 := 1
//	T2: p2 k1 := 1, p3 k0 := 2
//	T3: p4 k1 := ⊥, p5 k0 := 3
//
// low = G(1) = {T1}, high = G(3) = {T1, T2}: the window is (1, 3].
func executedRun(t *testing.T) []byte { return executedRunAt(t, 5) }

func executedRunAt(t *testing.T, f model.Coord) []byte {
	var l model.Log
	l.Commit(model.Event{Key: 0, Img: 1})
	l.Commit(model.Event{Key: 1, Img: 1}, model.Event{Key: 0, Img: 2})
	l.Commit(model.Event{Key: 1, Img: model.Absent}, model.Event{Key: 0, Img: 3})
	p := &model.Plan{Keys: 2, Frontier: f}
	p.Add(model.Unit{Domain: model.Range(0, 2), Lo: 1, Hi: 3, Refresh: model.Store{0: 1}, Read: model.Range(0, 2)})
	if err := p.Check(&l); err != nil {
		t.Fatal(err)
	}
	b := bundleOf(t, ModelRun{Log: &l, Plan: p, Frontier: f, Discipline: WindowDiscard, Stream: model.WindowDiscard(p, &l, 0, f)})
	return edit(b, func(line string) string {
		line = strings.Replace(line, `"coordinates":"position"`, `"coordinates":"executed-set"`, 1)
		return strings.Replace(line, `"lo":1,"hi":3`, `"low":[[1,1]],"high":[[1,2]]`, 1)
	})
}

// Reference: main paper §7.4, Theorem 7: membership "label in high, not in
// low" is the window (lo, hi] when the samples are taken at transaction
// boundaries.
func TestExecutedSetCoordinates(t *testing.T) {
	b := executedRun(t)
	res := mustAccept(t, b)
	if res.Cut.State["0"] != "3" || len(res.Cut.State) != 1 {
		t.Errorf("cut %v, want {0: 3}", res.Cut.State)
	}
	// A sample that is no executed prefix G(c) (Theorem 7's interior
	// executed set): {T2} without T1.
	bad := edit(b, func(line string) string { return strings.Replace(line, `"low":[[1,1]]`, `"low":[[2,2]]`, 1) })
	if res := mustReject(t, bad, "executed-set samples"); res.Failure.Obligation != "S2" {
		t.Errorf("got %s", res.Line())
	}
	// A transaction label that recurs after another: transactions are
	// contiguous blocks (S-LOG).
	split := edit(b, func(line string) string {
		return strings.Replace(line, `{"p":5,"k":0,"v":3,"x":3}`, `{"p":5,"k":0,"v":3,"x":2}`, 1)
	})
	mustReject(t, split, "input wellformedness")
	// Positions instead of samples in an executed-set bundle: not a run.
	mixed := edit(b, func(line string) string {
		return strings.Replace(line, `"low":[[1,1]],"high":[[1,2]]`, `"lo":1,"hi":3`, 1)
	})
	mustReject(t, mixed, "materialization")
}

// Finding: an executed-set frontier inside a transaction was accepted — a
// half-applied transaction certified. Executed-set coordinates are
// transaction boundaries (main §7.4) and a transactional reading needs a
// transaction-closed frontier (§2.2): frontier 4 splits T3 = {p4, p5}.
// A position bundle may stop there (the row-event cut holds, Thm 1), but
// its Accept says the cut is no transactional snapshot.
func TestFrontierTransactionClosed(t *testing.T) {
	mustAccept(t, executedRunAt(t, 3))
	res := mustReject(t, executedRunAt(t, 4), "transaction-closed")
	if res.Failure.Obligation != "S4" || res.Failure.Coord == nil || *res.Failure.Coord != 4 {
		t.Errorf("got %s", res.Line())
	}
	position := edit(executedRunAt(t, 4), func(line string) string {
		line = strings.Replace(line, `"coordinates":"executed-set"`, `"coordinates":"position"`, 1)
		return strings.Replace(line, `"low":[[1,1]],"high":[[1,2]]`, `"lo":1,"hi":3`, 1)
	})
	res = mustAccept(t, position)
	if !strings.Contains(res.Line(), "splits transaction 3") {
		t.Errorf("the Accept does not say the frontier splits a transaction: %s", res.Line())
	}
	if res := mustAccept(t, executedRunAt(t, 5)); !strings.Contains(res.Line(), "faithful source observation") {
		t.Errorf("the Accept does not name what it rests on: %s", res.Line())
	}
}
