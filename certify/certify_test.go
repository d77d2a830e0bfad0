package certify

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/model"
)

// runExample is 003 §2's running example in the model's terms: two chunks
// over keys {0, 1} and {2}, read at different coordinates, with writes inside
// and after the windows.
//
//	p1: k0 := 1   (before chunk 1's window)
//	p2: k1 := 2   (inside chunk 1's window (1, 3]: discards the buffered k1)
//	p3: k2 := 1   (inside chunk 1's window; before chunk 2's (3, 4])
//	p4: k2 := 2   (inside chunk 2's window)
//	p5: k0 := ⊥   (after both windows)
func runExample(t testing.TB, discipline string) ModelRun {
	var l model.Log
	for _, e := range []model.Event{{Key: 0, Img: 1}, {Key: 1, Img: 2}, {Key: 2, Img: 1}, {Key: 2, Img: 2}, {Key: 0, Img: model.Absent}} {
		if !l.Commit(e) {
			t.Fatal("commit")
		}
	}
	l.Init = model.Store{1: 1} // k1 exists before the history starts
	p := &model.Plan{Keys: 3, Frontier: 5}
	p.Add(model.Unit{Domain: model.Range(0, 2), Lo: 1, Hi: 3, Refresh: model.Store{0: 1, 1: 1}, Read: model.Range(0, 2)})
	p.Add(model.Unit{Domain: model.Range(2, 3), Lo: 3, Hi: 4, Refresh: model.Store{2: 1}, Read: model.Range(2, 3)})
	if err := p.Check(&l); err != nil {
		t.Fatal(err)
	}
	r := ModelRun{Log: &l, Plan: p, Start: 0, Frontier: 5, Discipline: discipline}
	switch discipline {
	case WindowDiscard:
		r.Stream = model.WindowDiscard(p, &l, 0, 5)
	case RangeMerge:
		r.Stream = model.RangeMerge(p, &l, 0, 5)
	}
	return r
}

func bundleOf(t testing.TB, r ModelRun) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteModelBundle(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func verifyBytes(t testing.TB, b []byte, opt Options) *Result {
	t.Helper()
	res, err := Verify(bytes.NewReader(b), opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func mustAccept(t testing.TB, b []byte) *Result {
	t.Helper()
	res := verifyBytes(t, b, Options{KeepState: true})
	if res.Verdict != Accept {
		t.Fatalf("verdict %s, want Accept:\n%s", res.Line(), b)
	}
	return res
}

func mustReject(t testing.TB, b []byte, clause string) *Result {
	t.Helper()
	res := verifyBytes(t, b, Options{})
	if res.Verdict != Reject || res.Failure == nil || !strings.Contains(res.Failure.Clause, clause) {
		t.Fatalf("verdict %s, want Reject naming %q:\n%s", res.Line(), clause, b)
	}
	return res
}

// Reference: 003 §2, §6 (the running example's virtual cut), §9.2.
func TestAcceptRunningExample(t *testing.T) {
	for _, d := range []string{WindowDiscard, RangeMerge} {
		t.Run(d, func(t *testing.T) {
			r := runExample(t, d)
			res := mustAccept(t, bundleOf(t, r))
			want := r.Log.State(r.Frontier)
			for k := model.Key(0); k < 3; k++ {
				got := res.Cut.State[strings.TrimSpace(k.String()[1:])]
				if modelValue(want[k]) != orNull(got) {
					t.Errorf("cut %v = %q, want σ_5 = %v", k, got, want[k])
				}
			}
			if res.Cut.Frontier != 5 || res.Stats.Events != 5 || res.Stats.Units != 2 {
				t.Errorf("cut %+v stats %+v", res.Cut, res.Stats)
			}
		})
	}
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// edit rewrites a bundle line by line; drop removes the lines for which
// keep is false.
func edit(b []byte, f func(line string) string) []byte {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if l = f(l); l != "" {
			out = append(out, l)
		}
	}
	return []byte(strings.Join(out, "\n") + "\n")
}

// Reference: 003 §7.4 (each obligation is load-bearing), §9.4 (wrong
// evidence is rejected): a dropped window event, a stale refresh, a frontier
// before a high edge, a reordered prefix, and more.
func TestTamperedBundles(t *testing.T) {
	r := runExample(t, WindowDiscard)
	good := bundleOf(t, r)
	tests := []struct {
		name   string
		bundle []byte
		clause string
	}{
		{
			// The in-window event k1 := 2 at p2 is dropped from the stream:
			// the buffered read k1 = 1 was discarded, so k1 replays to ⊥.
			name: "dropped window event",
			bundle: edit(good, func(l string) string {
				return strings.Replace(dropLine(l, `{"out":1,"v":2,"tag":2}`), `"prefix_entries":6`, `"prefix_entries":5`, 1)
			}),
			clause: "window-discard emission",
		},
		{
			// Chunk 2 read k2 = 1 (σ_3, inside its bracket [3, 4]); the
			// tampered read says absent, which k2 was only before p3.
			name: "stale refresh",
			bundle: edit(good, func(l string) string {
				return strings.Replace(l, `{"read":2,"k":2,"v":1}`, `{"read":2,"k":2,"v":null}`, 1)
			}),
			clause: "O2",
		},
		{
			name: "frontier before a high edge",
			bundle: edit(good, func(l string) string {
				l = strings.Replace(l, `"frontier":5`, `"frontier":3`, 1)
				return strings.Replace(l, `"consumed":5`, `"consumed":3`, 1)
			}),
			clause: "frontier at or after every high edge",
		},
		{
			name:   "reordered prefix",
			bundle: swapOuts(good),
			clause: "window-discard emission",
		},
		{
			name:   "frontier disagrees with the run",
			bundle: edit(good, func(l string) string { return strings.Replace(l, `"frontier":5`, `"frontier":4`, 1) }),
			clause: "frontier(C) = frontier(R)",
		},
		{
			name:   "dropped log event",
			bundle: edit(good, func(l string) string { return dropLine(l, `{"p":2,"k":1,"v":2,"x":2}`) }),
			clause: "materialization",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if bytes.Equal(tc.bundle, good) {
				t.Fatal("the tamper changed nothing")
			}
			res := mustReject(t, tc.bundle, tc.clause)
			t.Log(res.Line())
		})
	}
}

func dropLine(l, target string) string {
	if l == target {
		return ""
	}
	return l
}

// swapOuts exchanges the first two emitted entries for different keys.
func swapOuts(b []byte) []byte {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	first := -1
	for i, l := range lines {
		if strings.HasPrefix(l, `{"out":`) {
			if first < 0 {
				first = i
				continue
			}
			lines[first], lines[i] = lines[i], lines[first]
			break
		}
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

// Reference: 003 §8.5 (Unsupported: uninterpretable evidence is never
// accepted).
func TestUnsupported(t *testing.T) {
	good := bundleOf(t, runExample(t, WindowDiscard))
	tests := []struct {
		name, field string
		bundle      []byte
	}{
		{"unknown version", "version", edit(good, func(l string) string { return strings.Replace(l, `"version":1`, `"version":2`, 1) })},
		{"unknown coordinate kind", "coordinates", edit(good, func(l string) string {
			return strings.Replace(l, `"coordinates":"position"`, `"coordinates":"lsn-vector"`, 1)
		})},
		{"unknown header field", "compression", edit(good, func(l string) string { return strings.Replace(l, `"version":1`, `"version":1,"compression":"zstd"`, 1) })},
		{"delta event without a full image", "delta", edit(good, func(l string) string {
			return strings.Replace(l, `{"p":3,"k":2,"v":1,"x":3}`, `{"p":3,"k":2,"delta":{"set":1},"x":3}`, 1)
		})},
		{"row event without v", "v", edit(good, func(l string) string {
			return strings.Replace(l, `{"p":3,"k":2,"v":1,"x":3}`, `{"p":3,"k":2,"x":3}`, 1)
		})},
		{"unknown record kind", "checkpoint", edit(good, func(l string) string {
			return strings.Replace(l, `{"p":3,"k":2,"v":1,"x":3}`, `{"checkpoint":3}`+"\n"+`{"p":3,"k":2,"v":1,"x":3}`, 1)
		})},
		{"unknown discipline", "discipline", edit(good, func(l string) string {
			return strings.Replace(l, `"discipline":"window-discard"`, `"discipline":"version-max"`, 1)
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := verifyBytes(t, tc.bundle, Options{})
			if res.Verdict != Unsupported || res.Failure.Field != tc.field {
				t.Fatalf("got %s (field %q), want Unsupported naming %q", res.Line(), res.Failure.Field, tc.field)
			}
		})
	}
}
