package certify

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// split verifies b in n parts and merges them.
func split(t *testing.T, b []byte, opt Options, n int) (*Result, []*Part, [][3]*bytes.Buffer) {
	t.Helper()
	parts := make([]*Part, n)
	bufs := make([][3]*bytes.Buffer, n)
	for i := range n {
		var w [3]io.Writer
		for f := range 3 {
			bufs[i][f] = new(bytes.Buffer)
			w[f] = bufs[i][f]
		}
		p, err := VerifyPart(bytes.NewReader(b), opt, Split{Index: i, Count: n}, w)
		if err != nil {
			t.Fatal(err)
		}
		parts[i] = p
	}
	res, err := MergeParts(parts, readersOf(bufs))
	if err != nil {
		t.Fatal(err)
	}
	return res, parts, bufs
}

func readersOf(bufs [][3]*bytes.Buffer) [][3]io.Reader {
	files := make([][3]io.Reader, len(bufs))
	for i := range bufs {
		for f := range 3 {
			files[i][f] = bytes.NewReader(bufs[i][f].Bytes())
		}
	}
	return files
}

// sameAnswer is what a merge must give: the whole run's verdict, first
// failure, cut (scope, frontier, present keys, digest, omitted keys) and
// assumptions.
func sameAnswer(a, b *Result) string {
	switch {
	case a.Verdict != b.Verdict:
		return "verdict " + a.Verdict.String() + " vs " + b.Verdict.String()
	case !reflect.DeepEqual(a.Failure, b.Failure):
		return "failure " + a.Line() + "\n  vs " + b.Line()
	case (a.Cut == nil) != (b.Cut == nil):
		return "cut presence"
	case a.Cut != nil && (a.Cut.Scope != b.Cut.Scope || a.Cut.Frontier != b.Cut.Frontier || a.Cut.Present != b.Cut.Present || a.Cut.Digest != b.Cut.Digest || a.Cut.Omitted != b.Cut.Omitted):
		return "cut " + a.Line() + "\n  vs " + b.Line()
	case !reflect.DeepEqual(a.Assumes, b.Assumes):
		return "assumptions"
	}
	return ""
}

// Split verification gives exactly the whole run's answer: the sampled
// cross-check enumeration (key lists and ranges, integer and string keys,
// complete and from-reads bases, survivor-only reads, mutated at random),
// split 1, 2, 3 and 7 ways, with and without a required scope.
func TestSplitEqualsWhole(t *testing.T) {
	every := 97
	if raceEnabled {
		every = 499
	}
	r := rand.New(rand.NewPCG(3, 4))
	byVerdict := map[Verdict]int{}
	byClause := map[string]int{}
	check := func(c *xcase, what string, b []byte) {
		var opt Options
		if r.IntN(3) == 0 {
			opt.Require = &ScopeSpec{Ranges: []RangeSpec{{}}}
		}
		whole, err := Verify(bytes.NewReader(b), opt)
		if err != nil {
			t.Fatal(err)
		}
		byVerdict[whole.Verdict]++
		if whole.Failure != nil {
			byClause[whole.Failure.Clause]++
		}
		for _, n := range []int{1, 2, 3, 7} {
			got, _, _ := split(t, b, opt, n)
			if d := sameAnswer(whole, got); d != "" {
				t.Fatalf("%s %v, %d parts: %s\n%s", what, c, n, d, b)
			}
		}
	}
	sampled(t, 1, 1, every, func(c *xcase, ranges bool, b []byte) {
		check(c, "model", b)
		check(c, "string keys", stringKeys(b))
		check(c, "from reads", fromReads(b))
		if ranges && c.discipline == WindowDiscard {
			check(c, "survivors", survivorsOnly(b, c))
		}
		check(c, "doubled reads", doubled(b, `{"read"`))
		check(c, "doubled entries", doubled(b, `{"out"`))
		for range 3 {
			check(c, "mutated", mutate(b, r))
		}
	})
	if byVerdict[Accept] == 0 || byVerdict[Reject] == 0 || len(byClause) < 8 {
		t.Fatalf("verdicts %v, clauses %v: too few kinds of answer to test the merge", byVerdict, byClause)
	}
	t.Logf("verdicts %v; %d clauses", byVerdict, len(byClause))
}

// doubled repeats every line that starts with prefix: a key's second read
// ends the run at that key's line (the earliest one, whatever part owns
// it); a second entry breaks the prefix at its key.
func doubled(b []byte, prefix string) []byte {
	var out []byte
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		out = append(out, l...)
		if bytes.HasPrefix(l, []byte(prefix)) {
			out = append(out, l...)
		}
	}
	return out
}

// A merge takes only the parts of one split of one bundle, each once,
// with the streams each wrote.
func TestMergeRefusesForeignParts(t *testing.T) {
	b := bundleOf(t, runExample(t, WindowDiscard))
	whole, err := Verify(bytes.NewReader(b), Options{})
	if err != nil || whole.Verdict != Accept {
		t.Fatalf("%v %v", whole, err)
	}
	res, parts, bufs := split(t, b, Options{}, 3)
	if d := sameAnswer(whole, res); d != "" {
		t.Fatal(d)
	}
	other := bytes.Replace(b, []byte(`"v":`), []byte(`"v" :`), 1) // the same run, another file
	_, otherParts, otherBufs := split(t, other, Options{}, 3)
	_, twoParts, twoBufs := split(t, b, Options{}, 2)
	tampered := make([][3]*bytes.Buffer, 3)
	copy(tampered, bufs)
	cut := bytes.Clone(bufs[0][fileCut].Bytes())
	if len(cut) == 0 {
		t.Fatal("part 0 has no present key; the example is too small")
	}
	cut[len(cut)-1] ^= 1
	tampered[0][fileCut] = bytes.NewBuffer(cut)
	for name, c := range map[string]struct {
		parts []*Part
		bufs  [][3]*bytes.Buffer
		want  string
	}{
		"another bundle": {[]*Part{parts[0], otherParts[1], parts[2]}, [][3]*bytes.Buffer{bufs[0], otherBufs[1], bufs[2]}, "another bundle"},
		"another split":  {[]*Part{parts[0], twoParts[1], parts[2]}, [][3]*bytes.Buffer{bufs[0], twoBufs[1], bufs[2]}, "split into 2"},
		"twice":          {[]*Part{parts[0], parts[1], parts[1]}, [][3]*bytes.Buffer{bufs[0], bufs[1], bufs[1]}, "twice"},
		"missing":        {parts[:2], bufs[:2], "part 2/3 is missing"},
		"tampered":       {parts, tampered, "not the one it wrote"},
	} {
		_, err := MergeParts(c.parts, readersOf(c.bufs))
		if !errors.Is(err, ErrParts) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// swapEntries exchanges the n-th and n+1-th emitted entries when their
// keys differ: each key's own entries stay in order, so only the whole
// stream's order is broken.
func swapEntries(t *testing.T, b []byte, n int) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	seen := 0
	for i := 0; i+1 < len(lines); i++ {
		if !bytes.HasPrefix(lines[i], []byte(`{"out"`)) {
			continue
		}
		if seen++; seen < n || !bytes.HasPrefix(lines[i+1], []byte(`{"out"`)) {
			continue
		}
		ki := bytes.SplitN(lines[i], []byte(","), 2)[0]
		kj := bytes.SplitN(lines[i+1], []byte(","), 2)[0]
		if bytes.Equal(ki, kj) {
			continue
		}
		lines[i], lines[i+1] = lines[i+1], lines[i]
		return bytes.Join(lines, nil)
	}
	t.Fatal("no two adjacent entries of different keys to swap")
	return nil
}

// Split verification of runs with many keys: a generated window-discard
// run as recorded, with its stream lagging the log, with two entries of
// different keys exchanged (every key's own entries in order: only the
// merge's comparison of the whole stream sees it), and with an entry's
// value changed; the range-merge and executed-set examples; parts
// spilling under a one-byte budget alike.
func TestSplitManyKeys(t *testing.T) {
	s := synth{keys: 3000, chunkKeys: 500, window: 1000, events: 12000}
	if raceEnabled {
		s = synth{keys: 600, chunkKeys: 100, window: 200, events: 2400}
	}
	var buf bytes.Buffer
	if err := s.write(&buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	changed := bytes.Replace(b, []byte(`"v":1,"tag"`), []byte(`"v":2,"tag"`), 1)
	if bytes.Equal(changed, b) {
		t.Fatal("no entry to change")
	}
	cases := map[string][]byte{
		"synth":           b,
		"synth, lagging":  lagging(b),
		"synth, swapped":  swapEntries(t, b, s.events/2),
		"synth, changed":  changed,
		"range-merge":     bundleOf(t, runExample(t, RangeMerge)),
		"executed-set":    executedRun(t),
		"window-discard":  bundleOf(t, runExample(t, WindowDiscard)),
		"lagging example": lagging(bundleOf(t, runExample(t, RangeMerge))),
	}
	for name, b := range cases {
		whole, err := Verify(bytes.NewReader(b), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(name, "synth, ") != (whole.Verdict != Accept) && name != "synth, lagging" {
			t.Fatalf("%s: %s", name, whole.Line())
		}
		for _, n := range []int{2, 7} {
			for _, mem := range []int64{0, 1} {
				if mem == 1 && strings.HasPrefix(name, "synth") && n == 7 {
					continue // every record spilled: slow, and the 2-part case covers it
				}
				got, _, _ := split(t, b, Options{Mem: mem, Dir: t.TempDir()}, n)
				if d := sameAnswer(whole, got); d != "" {
					t.Errorf("%s, %d parts, budget %d: %s", name, n, mem, d)
				}
			}
		}
		t.Logf("%s: %s", name, whole.Line())
	}
}

// The merge of parts' streams against a sort: streams of entries with
// equal lines among them and values longer than a reader's buffer, merged
// by line, come out ordered and each exactly once, the values whole; a
// stream cut inside a record is an error, not an end.
func TestMergedOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	type rec struct {
		line int64
		v    string
	}
	encode := func(r rec) []byte {
		b := binary.AppendUvarint(nil, uint64(r.line))
		b = binary.AppendUvarint(b, 0)
		b = binary.AppendUvarint(b, 1)
		b = append(b, 'k')
		b = binary.AppendUvarint(b, uint64(len(r.v)))
		b = append(b, r.v...)
		return binary.AppendVarint(b, -3)
	}
	for k := range 9 {
		var all []rec
		rs := make([]*partReader, k)
		for i := range k {
			var stream []byte
			line := int64(rng.IntN(5))
			for range rng.IntN(40) {
				line += int64(rng.IntN(3)) // equal lines across and within streams
				n := rng.IntN(20)
				if rng.IntN(10) == 0 {
					n = 70_000 + rng.IntN(70_000)
				}
				r := rec{line, strings.Repeat(string(rune('a'+i)), n) + strconv.Itoa(len(all))}
				all = append(all, r)
				stream = append(stream, encode(r)...)
			}
			var r io.Reader = bytes.NewReader(stream)
			if i%2 == 1 { // reads that end inside a varint
				r = iotest.OneByteReader(r)
			}
			rs[i] = newPartReader(r, sha256.New())
		}
		m := newMerged(rs, (*partReader).next, func(a, b *partRecord) bool { return a.at.Line < b.at.Line })
		var got []rec
		var r partRecord
		for m.next(&r) {
			if len(got) > 0 && r.at.Line < got[len(got)-1].line {
				t.Fatalf("%d streams: line %d after %d", k, r.at.Line, got[len(got)-1].line)
			}
			if string(r.key) != "k" || r.tag != -3 {
				t.Fatalf("%d streams: record %q %d", k, r.key, r.tag)
			}
			got = append(got, rec{r.at.Line, string(r.v)})
		}
		key := func(a, b rec) int { return cmp.Or(cmp.Compare(a.line, b.line), strings.Compare(a.v, b.v)) }
		slices.SortFunc(all, key)
		slices.SortFunc(got, key)
		if !slices.Equal(all, got) {
			t.Fatalf("%d streams: %d records merged of %d", k, len(got), len(all))
		}
		for i, pr := range rs {
			if pr.err != nil {
				t.Fatalf("stream %d: %v", i, pr.err)
			}
		}
	}
	whole := encode(rec{5, strings.Repeat("x", 100_000)})
	for _, cut := range []int{1, 3, 50_000, len(whole) - 1} {
		pr := newPartReader(bytes.NewReader(whole[:cut]), sha256.New())
		var r partRecord
		if pr.next(&r) || pr.err != io.ErrUnexpectedEOF && pr.err != io.EOF {
			t.Errorf("cut at %d of %d: read %v, error %v", cut, len(whole), r.at, pr.err)
		}
	}
}
