package certify

import (
	"bytes"
	"strings"
	"testing"
)

// soundness runs the cross-check's mutated emitters and counts the wrong
// Accepts — accepted streams whose replay is not σ_f (Theorem 1 broken) —
// and the Rejects that name the virtual-cut equality.
func soundness(t *testing.T) (wrong, byVC int) {
	var buf bytes.Buffer
	short := 1
	if raceEnabled || testing.Short() {
		short = 0 // one-chunk plans only
	}
	enumerate(1, short, func(c xcase) {
		if c.discipline == PointSplice || expect(&c) != "" {
			return
		}
		p := c.plan
		p.Frontier = c.f
		for _, m := range mutants {
			if m.discipline != c.discipline {
				continue
			}
			s := m.e.emit(&p, &c.log, c.s0, c.f)
			buf.Reset()
			if err := WriteModelBundle(&buf, ModelRun{Log: &c.log, Plan: &c.plan, Start: c.s0, Frontier: c.f, Discipline: c.discipline, Stream: s}); err != nil {
				t.Fatal(err)
			}
			res := verifyBytes(t, buf.Bytes(), Options{})
			got, sigma := s.Replay(), c.log.State(c.f)
			switch {
			case res.Verdict == Accept && (got[0] != sigma[0] || got[1] != sigma[1]):
				wrong++
			case res.Verdict == Reject && res.Failure.Obligation == "VC":
				byVC++
			}
		}
	})
	return wrong, byVC
}

// Plant a bug: the cross-check against the model must catch a verifier
// whose virtual-cut equality is off. With all obligations on, no mutated
// stream is accepted wrongly. With the prefix check off, the equality alone
// still rejects every stream that breaks the cut (it is checked anyway,
// 003 §6). With both off, the cross-check finds wrong Accepts, and the
// differential test against the reference disagrees.
func TestPlantedBugsAreCaught(t *testing.T) {
	defer func() { planted.noEmission, planted.noVC = false, false }()
	if wrong, _ := soundness(t); wrong != 0 {
		t.Fatalf("%d wrong Accepts with every obligation on", wrong)
	}
	planted.noEmission = true
	wrong, byVC := soundness(t)
	if wrong != 0 || byVC == 0 {
		t.Fatalf("without the prefix check: %d wrong Accepts, %d rejected by the virtual-cut equality", wrong, byVC)
	}
	planted.noVC = true
	wrong, _ = soundness(t)
	if wrong == 0 {
		t.Fatal("without the prefix check and the virtual-cut equality the cross-check finds no wrong Accept")
	}
	r := runExample(t, WindowDiscard)
	b := bundleOf(t, r)
	if d, _ := differ(b); d != "" {
		t.Fatalf("the running example: %s", d)
	}
	// k1's in-window event dropped from the stream: k1 replays to its
	// discarded read's absence, not σ_5(k1) = 2.
	dropped := edit(b, func(l string) string {
		return strings.Replace(dropLine(l, `{"out":1,"v":2,"tag":2}`), `"prefix_entries":6`, `"prefix_entries":5`, 1)
	})
	if d, _ := differ(dropped); d == "" {
		t.Fatal("the reference agrees with a verifier that accepts a dropped window event")
	}
	t.Logf("wrong Accepts with both off: %d", wrong)
}
