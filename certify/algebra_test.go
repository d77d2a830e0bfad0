package certify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/model"
)

// Reference: 003 §11.2, §11.4, §11.5: an accepted cut at f followed by the
// continuation segment (f, f'] is the cut at f' — the same state a fresh
// certificate of the longer run accepts. Every accepted case of the
// cross-check enumeration whose log goes past its frontier, advanced to
// every later frontier.
func TestAdvanceEqualsLongerRun(t *testing.T) {
	long, short := bounds()
	var advanced int
	var seg, longer bytes.Buffer
	enumerate(long, short, func(c xcase) {
		if expect(&c) != "" || c.f >= c.log.Len() || c.s0 != 0 {
			return
		}
		b := bundleOf(t, ModelRun{Log: &c.log, Plan: &c.plan, Start: c.s0, Frontier: c.f, Discipline: c.discipline, Stream: c.stream()})
		for f2 := c.f + 1; f2 <= c.log.Len(); f2++ {
			seg.Reset()
			if err := WriteModelSegment(&seg, &c.log, c.f, f2); err != nil {
				t.Fatal(err)
			}
			res, err := Verify(bytes.NewReader(b), Options{Segment: bytes.NewReader(seg.Bytes()), KeepState: true})
			if err != nil || res.Verdict != Accept {
				t.Fatalf("%v advanced to %d: %v %v", &c, f2, res.Line(), err)
			}
			d := c
			d.f = f2
			longer.Reset()
			if err := WriteModelBundle(&longer, ModelRun{Log: &d.log, Plan: &d.plan, Start: d.s0, Frontier: f2, Discipline: d.discipline, Stream: d.stream()}); err != nil {
				t.Fatal(err)
			}
			fresh := verifyBytes(t, longer.Bytes(), Options{KeepState: true})
			if fresh.Verdict != Accept || fresh.Cut.Digest != res.Cut.Digest || res.Cut.Frontier != int64(f2) {
				t.Fatalf("%v: advanced to %d gives %v; certifying the longer run gives %v", &c, f2, res.Cut.State, fresh.Line())
			}
			advanced++
			// The same segment with its first row event's image changed
			// contradicts the bundle's own log, which reaches f2.
			lines := strings.Split(seg.String(), "\n")
			for i, l := range lines[1:] {
				if strings.Contains(l, `"k":`) {
					lines[i+1] = strings.Replace(strings.Replace(l, `"v":null`, `"v":9`, 1), `"v":1}`, `"v":9}`, 1)
					bad := verifyBytes(t, b, Options{Segment: strings.NewReader(strings.Join(lines, "\n"))})
					if bad.Verdict != Reject || bad.Failure.Obligation != "ContSeg" {
						t.Fatalf("%v: a segment contradicting the log to %d: %s", &c, f2, bad.Line())
					}
					break
				}
			}
		}
	})
	if advanced == 0 {
		t.Fatal("no case advanced")
	}
	t.Logf("%d advances", advanced)
}

// Reference: 003 §11.1: a segment that does not start at the frontier, or
// whose positions go backwards, is not the continuation segment.
func TestAdvanceRejectsWrongSegment(t *testing.T) {
	r := runExample(t, WindowDiscard)
	r.Frontier = 4
	r.Stream = model.WindowDiscard(r.Plan, r.Log, 0, 4)
	b := bundleOf(t, r)
	for name, seg := range map[string]string{
		"starts elsewhere":  `{"format":"cutcheck-segment","version":1,"from":3,"to":5}` + "\n",
		"position repeated": `{"format":"cutcheck-segment","version":1,"from":4,"to":5}` + "\n" + `{"p":4,"k":0,"v":null}` + "\n",
		"beyond its end":    `{"format":"cutcheck-segment","version":1,"from":4,"to":5}` + "\n" + `{"p":6,"k":0,"v":null}` + "\n",
	} {
		res := verifyBytes(t, b, Options{Segment: bytes.NewReader([]byte(seg))})
		if res.Verdict != Reject || res.Failure.Obligation != "ContSeg" {
			t.Errorf("%s: %s", name, res.Line())
		}
	}
	// Finding: the segment was trusted. It must agree with the bundle's
	// own log where that goes past the frontier (p5 is k0 := ⊥ there), list
	// every position, and reach the frontier it claims.
	const head = `{"format":"cutcheck-segment","version":1,"from":4,"to":%d}` + "\n"
	for name, seg := range map[string]string{
		"contradicts the bundle's log": fmt.Sprintf(head, 5) + `{"p":5,"k":0,"v":7}` + "\n",
		"omits an event of the log":    fmt.Sprintf(head, 5) + `{"p":5}` + "\n",
		"another key than the log's":   fmt.Sprintf(head, 5) + `{"p":5,"k":1,"v":null}` + "\n",
		"has a gap":                    fmt.Sprintf(head, 7) + `{"p":5,"k":0,"v":null}` + "\n" + `{"p":7,"k":1,"v":3}` + "\n",
		"empty to 10^12":               fmt.Sprintf(head, 1000000000000),
		"stops short of its end":       fmt.Sprintf(head, 6) + `{"p":5,"k":0,"v":null}` + "\n",
	} {
		res := verifyBytes(t, b, Options{Segment: strings.NewReader(seg)})
		if res.Verdict != Reject || res.Failure.Obligation != "ContSeg" {
			t.Errorf("a segment that %s: %s", name, res.Line())
		} else {
			t.Logf("%s: %s", name, res.Line())
		}
	}
	for name, seg := range map[string]string{
		"agrees with the log":   fmt.Sprintf(head, 5) + `{"p":5,"k":0,"v":null}` + "\n",
		"goes beyond the log":   fmt.Sprintf(head, 6) + `{"p":5,"k":0,"v":null}` + "\n" + `{"p":6,"k":1,"v":3}` + "\n",
		"an out-of-scope event": fmt.Sprintf(head, 6) + `{"p":5,"k":0,"v":null}` + "\n" + `{"p":6,"k":9,"v":3}` + "\n",
	} {
		res := verifyBytes(t, b, Options{Segment: strings.NewReader(seg)})
		if res.Verdict != Accept || !strings.Contains(res.Line(), "advanced from the certified frontier 4") || !strings.Contains(res.Line(), "ContSeg") {
			t.Errorf("a segment that %s: %s", name, res.Line())
		}
	}
	res := verifyBytes(t, b, Options{Segment: bytes.NewReader([]byte(`{"format":"cutcheck-segment","version":1,"from":4,"to":5}` + "\n" + `{"p":5,"k":0,"v":null,"patch":1}` + "\n"))})
	if res.Verdict != Unsupported || res.Failure.Field != "patch" {
		t.Errorf("a segment event with an unknown field: %s", res.Line())
	}
}

func keysScope(ks ...string) *ScopeSpec {
	s := &ScopeSpec{Keys: []json.RawMessage{}}
	for _, k := range ks {
		s.Keys = append(s.Keys, json.RawMessage(k))
	}
	return s
}

// Reference: 003 §11.3: a cut restricts to any sub-scope, never widens; the
// restricted cut is the full cut on K'; evidence that fails only outside K'
// does not stop the cut on K'.
func TestRestriction(t *testing.T) {
	r := runExample(t, WindowDiscard)
	b := bundleOf(t, r)
	full := mustAccept(t, b)
	res := verifyBytes(t, b, Options{Restrict: keysScope("0", "2"), KeepState: true})
	if res.Verdict != Accept {
		t.Fatal(res.Line())
	}
	for k, v := range res.Cut.State {
		if k != "0" && k != "2" || full.Cut.State[k] != v {
			t.Errorf("restricted cut has %s = %s; full cut %v", k, v, full.Cut.State)
		}
	}
	if _, ok := full.Cut.State["2"]; !ok || res.Cut.State["2"] != full.Cut.State["2"] {
		t.Errorf("restricted cut %v lacks k2 of %v", res.Cut.State, full.Cut.State)
	}
	// Widening is unsound.
	if res := verifyBytes(t, b, Options{Restrict: keysScope("0", "7")}); res.Verdict != Reject || res.Failure.Obligation != "S3" {
		t.Errorf("widened scope: %s", res.Line())
	}
	// A stale read of k0 (untouched in its window, so its read survives)
	// fails O2 on the whole scope, not on {k1, k2}.
	stale := edit(b, func(l string) string {
		if l == `{"read":1,"k":0,"v":1}` {
			return `{"read":1,"k":0,"v":null}`
		}
		return l
	})
	mustReject(t, stale, "O2")
	if res := verifyBytes(t, stale, Options{Restrict: keysScope("1", "2")}); res.Verdict != Accept {
		t.Errorf("restricted away from the stale key: %s", res.Line())
	} else if res.Full == nil || res.Full.Verdict != Reject || !strings.Contains(res.Line(), "sub-scope only: the full certificate is Reject: S4 (O2") {
		// The Accept on K' must not read as the certificate's.
		t.Errorf("the Accept on a sub-scope of a rejected certificate does not say so: %s", res.Line())
	}
	if res := verifyBytes(t, b, Options{Restrict: keysScope("1", "2")}); res.Full == nil || !strings.Contains(res.Line(), "the full certificate is accepted too") {
		t.Errorf("restricted Accept of an accepted certificate: %s", res.Line())
	}
	if res := verifyBytes(t, stale, Options{Restrict: keysScope("0")}); res.Verdict != Reject {
		t.Errorf("restricted to the stale key: %s", res.Line())
	}
}

// Reference: 003 §11.3: under a restriction, a chunk with no key of K' is
// not part of the claim: its bracket may even reach past the frontier.
func TestRestrictionIgnoresOtherChunks(t *testing.T) {
	r := runExample(t, WindowDiscard)
	r.Frontier = 3 // before chunk 2's high edge 4: the whole cut fails
	r.Stream = model.WindowDiscard(r.Plan, r.Log, 0, 3)
	b := bundleOf(t, r)
	mustReject(t, b, "frontier at or after every high edge")
	res := verifyBytes(t, b, Options{Restrict: keysScope("0", "1"), KeepState: true})
	if res.Verdict != Accept || res.Cut.State["0"] != "1" || res.Cut.State["1"] != "2" {
		t.Fatalf("restricted to chunk 1's keys: %s %v", res.Line(), res.Cut)
	}
}
