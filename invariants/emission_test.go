package invariants

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/model"
)

// Reference: Def. 6.2–6.4, §6.4 — the check's disciplines are the model's
// emissions: on random plans over three keys, WindowDiscard, RangeMerge and
// PointSplice as Discipline.Emission computes them equal model.WindowDiscard,
// model.RangeMerge and model.PointSplice, and a point splice refuses a
// bracket that is not a point.
func TestDisciplinesAreTheModels(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 2))
	points, wide := 0, 0
	for range 3000 {
		var l model.Log
		for range r.IntN(7) {
			l.Commit(model.Event{Key: model.Key(r.IntN(3)), Img: model.Value(r.IntN(3))})
		}
		n := l.Len()
		p := model.Plan{Keys: 3}
		split := model.Key(1 + r.IntN(2))
		for _, d := range []model.KeySet{model.Range(0, split), model.Range(split, 3)} {
			lo := model.Coord(r.IntN(int(n) + 1))
			hi := lo
			if r.IntN(2) == 0 {
				hi = lo + model.Coord(r.IntN(int(n-lo)+1))
			}
			u := model.Unit{Domain: d, Lo: lo, Hi: hi, Read: d}
			for k := range d.Keys() {
				u.Refresh[k] = model.Value(r.IntN(3))
			}
			p.Add(u)
		}
		s0 := model.Coord(r.IntN(int(min(p.Units[0].Lo, p.Units[1].Lo)) + 1))
		f := max(p.Units[0].Hi, p.Units[1].Hi) + model.Coord(r.IntN(int(n-max(p.Units[0].Hi, p.Units[1].Hi))+1))
		for _, tt := range []struct {
			d    Discipline
			want model.Stream
		}{
			{WindowDiscard, model.WindowDiscard(&p, &l, s0, f)},
			{RangeMerge, model.RangeMerge(&p, &l, s0, f)},
		} {
			if got, _, ok := tt.d.Emission(&p, &l, s0, f); !ok || !slices.Equal(got, tt.want) {
				t.Fatalf("%s over %v, s0 = %d, f = %d: %v, want %v", tt.d.Name, p.Units[:2], s0, f, got, tt.want)
			}
		}
		want, point := model.PointSplice(&p, &l, s0, f)
		got, _, ok := PointSplice.Emission(&p, &l, s0, f)
		if ok != point || !slices.Equal(got, want) {
			t.Fatalf("point-splice over %v: %v %v, want %v %v", p.Units[:2], got, ok, want, point)
		}
		if point {
			points++
		} else {
			wide++
		}
	}
	if points < 100 || wide < 100 {
		t.Errorf("%d plans of point brackets, %d of others: too few of one", points, wide)
	}
}

// Reference: Def. 6.2 (window-discard), certify S4 — exact-emission on a
// capture built by hand: judged only once the plan is final and the
// consumer past the high edge; the stream of the discipline passes, an
// exact extra copy of a row fails naming the key and the entries due, a
// same-size stream with another entry fails too, and a capture keeping no
// digest cannot be judged.
func TestCheckExactEmission(t *testing.T) {
	// k0 := 1 at 1, the chunk {k0, k1} read at 1 (k0=1, k1=2), k1 := 3 at
	// 2, bracket (1, 3]: k0 survives, k1 is discarded.
	events := []model.Event{{Key: 0, Img: 1}, {Key: 1, Img: 3}, {Key: 1, Img: 3}}
	u := unit(1, 3, 1, 2)
	due := []model.Entry{{Key: 0, Val: 1, Tag: 1}, {Key: 1, Val: 3, Tag: 2}, {Key: 1, Val: 3, Tag: 3}, {Key: 0, Val: 1, Tag: 3}}
	build := func(out []model.Entry, pos model.Coord, closed bool) model.Capture {
		c := capture(events, u, [2]model.Coord{1, 1}, pos, nil, closed)
		c.Digesting = true
		for _, e := range out {
			c.Emitted.Add(e)
		}
		return c
	}
	ok := build(due, 3, true)
	if m := CheckExactEmission(&ok, 1, WindowDiscard); m != "" {
		t.Errorf("the discipline's stream: %s", m)
	}
	extra := build(append(slices.Clone(due[:1]), append([]model.Entry{due[0]}, due[1:]...)...), 3, true)
	m := CheckExactEmission(&extra, 1, WindowDiscard)
	if !strings.Contains(m, "key k0: the stream carries 3 entries") || !strings.Contains(m, "carries 2: k0=1@1 k0=1@3") {
		t.Errorf("an extra copy: %q", m)
	}
	other := build([]model.Entry{due[0], due[1], due[2], {Key: 0, Val: 1, Tag: 2}}, 3, true)
	if m := CheckExactEmission(&other, 1, WindowDiscard); !strings.Contains(m, "not the same ones") {
		t.Errorf("another entry: %q", m)
	}
	for name, c := range map[string]model.Capture{"open unit": build(nil, 3, false), "before the high edge": build(nil, 2, true)} {
		if m := CheckExactEmission(&c, 1, WindowDiscard); m != "" {
			t.Errorf("%s: judged: %s", name, m)
		}
	}
	plain := ok
	plain.Digesting = false
	if m := CheckExactEmission(&plain, 1, WindowDiscard); !strings.Contains(m, "no digest") {
		t.Errorf("no digest: %q", m)
	}
	if m := CheckExactEmission(&ok, 1, PointSplice); !strings.Contains(m, "not a point") {
		t.Errorf("point-splice over (1, 3]: %q", m)
	}
	// Range-merge withholds k0's event at 1 and k1's at 2 and 3, and
	// emits M(k0) = 1, M(k1) = 3 at 3: the window-discard stream is not it.
	if m := CheckExactEmission(&ok, 1, RangeMerge); !strings.Contains(m, "range-merge emission") {
		t.Errorf("range-merge: %q", m)
	}
	if m := EmissionJudged(&ok, 1, WindowDiscard); !strings.Contains(m, "judged 4 entries (1 copied, 0 events withheld, 1 of 2 rows read present not copied") {
		t.Errorf("emission-judged: %q", m)
	}
}
