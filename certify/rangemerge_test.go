package certify

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/model"
)

// Reference: Lemma 6.3, Def. 6.4 — range-merge's shape is per key. A run
// that emits a unit's merged block as soon as its backfill ends (before the
// place Def. 6.4 gives its close, as a parallel-chunk capture does when
// its live reader starts below the latest high edge) replays the same and
// is accepted; swapping two entries of one key is not.
func TestRangeMergeEarlyClose(t *testing.T) {
	var l model.Log
	for _, e := range []model.Event{{Key: 1, Img: 1}, {Key: 1, Img: 2}, {Key: 0, Img: 1}, {Key: 0, Img: 2}} {
		l.Commit(e)
	}
	var p model.Plan
	p.Keys = 2
	a := model.Unit{Domain: model.KeySet(0).With(0), Lo: 0, Hi: 3, Read: model.KeySet(0).With(0)} // k0 read ⊥ at 0
	b := model.Unit{Domain: model.KeySet(0).With(1), Lo: 0, Hi: 1, Read: model.KeySet(0).With(1)}
	b.Refresh[1] = 1 // σ_1(k1)
	p.Add(a)
	p.Add(b)
	p.Frontier = 4
	lawful := model.RangeMerge(&p, &l, 0, 4)
	want := model.Stream{{Key: 1, Val: 1, Tag: 1}, {Key: 1, Val: 2, Tag: 2}, {Key: 0, Val: 1, Tag: 3}, {Key: 0, Val: 2, Tag: 4}}
	if !streamEqual(lawful, want) {
		t.Fatalf("Def. 6.4's emission is %v, want %v", lawful, want)
	}
	verify := func(s model.Stream) *Result {
		var buf bytes.Buffer
		if err := WriteModelBundle(&buf, ModelRun{Log: &l, Plan: &p, Start: 0, Frontier: 4, Discipline: RangeMerge, Stream: s}); err != nil {
			t.Fatal(err)
		}
		res, err := Verify(&buf, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	early := model.Stream{lawful[0], lawful[2], lawful[1], lawful[3]} // both blocks before the live events
	if res := verify(early); res.Verdict != Accept {
		t.Errorf("early close: %s", res.Line())
	}
	swapped := model.Stream{lawful[1], lawful[0], lawful[2], lawful[3]}
	if res := verify(swapped); res.Verdict != Reject || !strings.Contains(res.Failure.Clause, "emission") && !strings.Contains(res.Failure.Clause, "monotonicity") {
		t.Errorf("one key's entries swapped: %s", res.Line())
	}
	dropped := model.Stream{lawful[0], lawful[2], lawful[3]}
	if res := verify(dropped); res.Verdict != Reject || !strings.Contains(res.Failure.Clause, "emission") || res.Failure.Key != "1" {
		t.Errorf("a live event of k1 dropped: %s", res.Line())
	}
}
