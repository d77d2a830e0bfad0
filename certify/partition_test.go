package certify

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// inParts verifies b as a local split of n parts (the budget passed at
// once) and fails unless the answer is the whole in-memory one.
func inParts(t *testing.T, what string, b []byte, n int) *Result {
	t.Helper()
	whole, err := Verify(bytes.NewReader(b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	got, err := Verify(bytes.NewReader(b), Options{Mem: 1, Dir: dir, Parts: n})
	if err != nil {
		t.Fatal(err)
	}
	if d := sameAnswer(whole, got); d != "" {
		t.Fatalf("%s, %d parts: %s\n%s", what, n, d, b)
	}
	w, g := whole.Stats, got.Stats
	if w.Lines != g.Lines || w.Events != g.Events || w.Entries != g.Entries || w.Reads != g.Reads || whole.Verdict == Accept && w.ScopeKeys != g.ScopeKeys {
		t.Fatalf("%s, %d parts: stats %+v, whole %+v", what, n, g, w)
	}
	if got.Stats.Parts != 0 && got.Stats.Parts != n {
		t.Fatalf("%s: verified in %d parts, want %d", what, got.Stats.Parts, n)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Fatalf("%s: left behind: %v", what, left)
	}
	return got
}

// Past its budget a bundle read again is verified as a local split, with
// the whole run's answer: a sample of the cross-check enumeration in its
// forms, mutated, lagging, with doubled reads and entries, in 2 and 5 parts.
func TestLocalSplitEqualsWhole(t *testing.T) {
	every := 1009
	if raceEnabled {
		every = 5003
	}
	r := rand.New(rand.NewPCG(5, 6))
	cases, split := 0, 0
	sampled(t, 1, 1, every, func(c *xcase, _ bool, b []byte) {
		for _, form := range [][]byte{b, lagging(b), stringKeys(b), fromReads(b), doubled(b, `{"read"`), doubled(b, `{"out"`), mutate(b, r), mutate(b, r)} {
			cases++
			if inParts(t, c.String(), form, 2+cases%2*3).Stats.Parts > 0 {
				split++
			}
		}
	})
	for _, d := range []string{WindowDiscard, RangeMerge} {
		inParts(t, d, bundleOf(t, runExample(t, d)), 3)
	}
	inParts(t, "executed-set", executedRun(t), 3)
	if split != cases {
		t.Fatalf("%d of %d bundles were verified in parts", split, cases)
	}
	t.Logf("%d bundles, %d verified in parts", cases, split)
}

// A generated run over thousands of keys, from a file, under a budget it
// outgrows: verified in the parts the budget needs, as in memory; an
// altered entry and an order broken across keys are rejected alike.
func TestLocalSplitManyKeys(t *testing.T) {
	s := synth{keys: 20000, chunkKeys: 1000, window: 2000, events: 60000}
	if raceEnabled {
		s = synth{keys: 2000, chunkKeys: 200, window: 400, events: 6000}
	}
	var buf bytes.Buffer
	if err := s.write(&buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	for name, b := range map[string][]byte{
		"as recorded": b,
		"changed":     bytes.Replace(b, []byte(`"v":1,"tag"`), []byte(`"v":2,"tag"`), 1),
		"swapped":     swapEntries(t, b, s.events/2),
	} {
		whole, err := Verify(bytes.NewReader(b), Options{})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "bundle.jsonl")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		// a budget a sixth of what the states need
		mem := int64(s.keys) * stateBytes(int64(len(b))/whole.Stats.Lines) * 4 / 6
		got, err := Verify(f, Options{Mem: mem, Dir: t.TempDir()})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if d := sameAnswer(whole, got); d != "" {
			t.Fatalf("%s: %s", name, d)
		}
		if got.Stats.Parts < 4 || got.Stats.Spills != 0 {
			t.Errorf("%s: %d parts, %d spills under a sixth of the states' memory", name, got.Stats.Parts, got.Stats.Spills)
		}
		t.Logf("%s: %s (%d parts)", name, whole.Line(), got.Stats.Parts)
	}
}

// A part reads its own lines and, between them, runs of what the others'
// lines add up to, reads and base observations among them while their
// phase allows: out of their phase, after a line every part reads whole,
// and between blank lines, the parts answer as the whole run does.
func TestLocalSplitPhases(t *testing.T) {
	lines := bytes.SplitAfter(bundleOf(t, runExample(t, WindowDiscard)), []byte("\n"))
	if len(lines) < 8 || !bytes.HasPrefix(lines[1], []byte(`{"base"`)) || !bytes.HasPrefix(lines[2], []byte(`{"read"`)) || !bytes.HasPrefix(lines[5], []byte(`{"p"`)) {
		t.Fatalf("the example is not base, reads, log:\n%s", bytes.Join(lines, nil))
	}
	move := func(from, to int) []byte { // line from, put before line to
		var out [][]byte
		for i, l := range lines {
			if i == to {
				out = append(out, lines[from])
			}
			if i != from {
				out = append(out, l)
			}
		}
		if to >= len(lines) {
			out = append(out, lines[from])
		}
		return bytes.Join(out, nil)
	}
	insert := func(at int, l string) []byte {
		return bytes.Join(append(append(append([][]byte{}, lines[:at]...), []byte(l+"\n")), lines[at:]...), nil)
	}
	for name, b := range map[string][]byte{
		"as recorded":           bytes.Join(lines, nil),
		"blank lines":           append([]byte("\n"), bytes.Join(lines, []byte("\n"))...),
		"a read after the log":  move(4, 6),
		"a read at the end":     move(3, len(lines)),
		"a base after a read":   move(1, 3),
		"a base at the end":     move(1, len(lines)),
		"a keyless event first": insert(1, `{"p":1,"v":1}`),
		"an unknown line":       insert(3, `{"what":1}`),
		"a malformed line":      insert(2, `{"read":`),
		"an entry first":        move(6, 5),
		// O3 fails for keys of two units at the log's first line: the
		// whole run meets unit 1's first, and so must the merge
		"two reads missing": bytes.Join(append(append([][]byte{}, lines[:3]...), lines[5:]...), nil),
	} {
		accept := name == "as recorded" || name == "blank lines" || name == "an entry first"
		for _, n := range []int{2, 3, 5} {
			if got := inParts(t, name, b, n); (got.Verdict == Accept) != accept {
				t.Errorf("%s: %s", name, got.Line())
			}
		}
	}
}

// A split whose files were cut short or grown after the partition pass
// (a full disk, another process) is an error, never a verdict on the lines
// left: a part reads each of its lines where its skeleton says.
func TestSplitFilesDamaged(t *testing.T) {
	var b bytes.Buffer
	s := synth{keys: 2000, chunkKeys: 250, window: 500, events: 20000}
	if err := s.write(&b); err != nil {
		t.Fatal(err)
	}
	// cut keeps what comes before the last record's start (or its line's).
	cut := func(line bool) func(string) error {
		return func(p string) error {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			n, m := 0, 0
			for n < len(data) {
				l, k := binary.Uvarint(data[n:])
				if m = n; line {
					m += k
				}
				n += k + int(l)
			}
			return os.Truncate(p, int64(m))
		}
	}
	grow := func(p string) error { // a record more
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.Write([]byte("\x02{}"))
		return err
	}
	for _, c := range []struct {
		file   string
		damage func(path string) error
	}{
		{"bucket-*", func(p string) error { // the last record's last byte gone
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.Truncate(p, fi.Size()-1)
		}},
		{"bucket-*", cut(false)}, // the last record gone whole
		{"bucket-*", cut(true)},  // its line gone, its length left
		{"bucket-*", grow},
		{"global", grow},
	} {
		dir := t.TempDir()
		damaged := false
		res, err := Verify(bytes.NewReader(b.Bytes()), Options{Parts: 3, Dir: dir, Progress: 1, OnProgress: func(stage string, _ Stats) {
			if stage != "distributing" || damaged {
				return
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*", c.file))
			if len(files) == 0 {
				t.Fatalf("no %s in %s", c.file, dir)
			}
			damaged = true
			if err := c.damage(files[0]); err != nil {
				t.Fatal(err)
			}
		}})
		if !damaged || err == nil {
			t.Errorf("%s damaged (%v): %v %v", c.file, damaged, res, err)
		}
	}
}
