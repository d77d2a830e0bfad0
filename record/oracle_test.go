package record

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// The external sort gives back every entry in (key, kind, position)
// order, across many runs on disk, and removes its files.
func TestSorterMergesRuns(t *testing.T) {
	dir := t.TempDir()
	s := &sorter{dir: dir, budget: 300}
	rng := rand.New(rand.NewPCG(1, 2))
	var want []entry
	for i := 0; i < 2000; i++ {
		e := entry{key: []byte(fmt.Sprint(rng.IntN(300))), kind: byte(rng.IntN(2)), pos: rng.Int64N(50), img: []byte(fmt.Sprintf(`{"v":%d}`, i))}
		want = append(want, entry{key: bytes.Clone(e.key), kind: e.kind, pos: e.pos, img: bytes.Clone(e.img)})
		if err := s.add(e); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.files) < 10 {
		t.Fatalf("%d runs: the budget did not spill", len(s.files))
	}
	sort.SliceStable(want, func(i, j int) bool { return less(&want[i], &want[j]) })
	it, err := s.iter()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		e, ok, err := it.next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if i != len(want) {
				t.Fatalf("%d entries back of %d", i, len(want))
			}
			break
		}
		w := want[i]
		if !bytes.Equal(e.key, w.key) || e.kind != w.kind || e.pos != w.pos {
			t.Fatalf("entry %d: got %s/%d/%d, want %s/%d/%d", i, e.key, e.kind, e.pos, w.key, w.kind, w.pos)
		}
	}
	s.remove()
	if left, _ := filepath.Glob(filepath.Join(dir, SpoolPrefix+fmt.Sprint(os.Getpid())+"-oracle-*")); len(left) != 0 {
		t.Errorf("left %v", left)
	}
}

// The check's verdicts on a stream it is handed: equality without events
// in the bracket, any value of the bracket with them, the first differing
// column named.
func TestOracleResult(t *testing.T) {
	check := func(table string, emitted [][3]string) string {
		o := newOracle(t.TempDir())
		o.m1, o.m2 = 10, 20
		if table != "" {
			o.sort.add(entry{key: []byte("1"), kind: fromTable, img: []byte(table)})
		}
		for _, e := range emitted {
			var pos int64
			fmt.Sscan(e[1], &pos)
			o.emitted([]byte(e[0]), pos, []byte(e[2]))
		}
		var st Stats
		msg, err := o.result(&st)
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}
	a, b, c := `{"id":1,"v":1}`, `{"id":1,"v":2}`, `{"id":1,"v":3}`
	for _, tc := range []struct {
		table   string
		emitted [][3]string
		want    string
	}{
		{a, [][3]string{{"1", "3", a}}, ""},
		{a, [][3]string{{"1", "3", b}}, "column v is 1 in the table and 2 in the stream"},
		{b, [][3]string{{"1", "3", a}, {"1", "12", b}, {"1", "15", c}}, ""},         // inside the bracket
		{b, [][3]string{{"1", "3", a}, {"1", "12", c}, {"1", "25", b}}, "column v"}, // only after M2
		{"", [][3]string{{"1", "3", a}, {"1", "5", "null"}}, ""},
		{"", [][3]string{{"1", "3", a}}, "the table has no row, the stream holds"},
		{a, nil, "the stream has no row"},
	} {
		if got := check(tc.table, tc.emitted); tc.want == "" && got != "" || !bytes.Contains([]byte(got), []byte(tc.want)) {
			t.Errorf("table %s, emitted %v: got %q, want %q", tc.table, tc.emitted, got, tc.want)
		}
	}
}
