package open

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
)

// Reference: §6.5, S-IMG — the capture's view of an event: an insert or a
// delete whole, an update as the columns it changes; folding the delta onto
// the row before it gives the row after it.
func TestRereadSee(t *testing.T) {
	tests := []struct {
		pre, post model.Value
		seen      string
	}{
		{0, 3, "insert 3(a0 b1)"},
		{4, 0, "delete"},
		{1, 2, "delta {a:=1}"},
		{4, 3, "delta {a:=0}"},
		{2, 4, "delta {b:=1}"},
		{2, 3, "delta {a:=0 b:=1}"},
	}
	for _, tt := range tests {
		var l model.Log
		l.Init[0] = tt.pre
		l.Commit(model.Event{Key: 0, Img: tt.post})
		d := rrSee(&l, 1)
		if d.String() != tt.seen || d.onto(tt.pre) != tt.post {
			t.Errorf("%v → %v: seen %q, folded onto %v gives %v", tt.pre, tt.post, d, tt.pre, d.onto(tt.pre))
		}
	}
}

// ---- an independent enumerator for reread (§6.5) ----

// rrbf is one state. Rows are (a, b) pairs, written into the log as
// key*16 + value with value = a + 2b + 1 (0 = no row), as in the model.
type rrbf struct {
	base, log, txn  []int
	dom, rd, lo, hi []int   // per unit: domain and read-key masks, edges (hi -1 until recorded)
	ref             [][]int // per unit, per key: the value read (0 until read)
	readAt          []int
	phase           int // 0 idle, 1 low, 2 window open, 3 high, 4 stale pending, 5 done, 6 stuck
	pos, s0         int
	out, tag        []int
	dup             []bool
	closed          int
	buf, known, col int
}

func (s rrbf) key() string {
	return fmt.Sprint(s.base, s.log, s.txn, s.dom, s.rd, s.lo, s.hi, s.ref, s.readAt, s.phase, s.pos, s.s0, s.out, s.tag, s.closed, s.buf, s.known, s.col)
}

func (s rrbf) clone() rrbf {
	t := s
	for _, p := range []*[]int{&t.log, &t.txn, &t.dom, &t.rd, &t.lo, &t.hi, &t.readAt, &t.out, &t.tag} {
		*p = slices.Clone(*p)
	}
	t.dup = slices.Clone(s.dup)
	t.ref = nil
	for _, r := range s.ref {
		t.ref = append(t.ref, slices.Clone(r))
	}
	return t
}

func (s rrbf) sigma(n, k int) int {
	v := s.base[k]
	for _, e := range s.log[:n] {
		if e/16 == k {
			v = e % 16
		}
	}
	return v
}

func (s *rrbf) emit(k, v, tag int) {
	s.dup[k] = s.dup[k] || tag != 0 && tag == s.tag[k]
	s.out[k], s.tag[k] = v, tag
}

// rrFold is the row after the event at p, folded onto the row base: an
// insert or delete gives its own image; an update sets the columns in which
// the rows before and after it differ.
func (s rrbf) rrFold(p, base int) int {
	k, post := s.log[p-1]/16, s.log[p-1]%16
	pre := s.sigma(p-1, k)
	if pre == 0 || post == 0 {
		return post
	}
	cols := func(v int) [2]int { return [2]int{(v - 1) % 2, (v - 1) / 2} }
	b, x, y := cols(base), cols(pre), cols(post)
	for c := range 2 {
		if x[c] != y[c] {
			b[c] = y[c]
		}
	}
	return b[0] + 2*b[1] + 1
}

// rrEnumerate: one bracket over the scope, then fresh brackets for keys hit
// by an update while their row was not known to the capture, as many as the
// chunks allow (see reread.go).
func rrEnumerate(cfg protocols.Config) rwStats {
	K := cfg.Keys
	var inits []rrbf
	for _, b := range rwStores(cfg) {
		inits = append(inits, rrbf{base: b, readAt: make([]int, K), out: make([]int, K), tag: make([]int, K), dup: make([]bool, K)})
	}
	all := 1<<K - 1
	return rwSearch(inits, func(s rrbf) []rrbf {
		var out []rrbf
		cur := make([]int, K)
		for k := range cur {
			cur[k] = s.sigma(len(s.log), k)
		}
		for _, rows := range rwTxns(cur, cfg.Values, min(cfg.Txn, cfg.Events-len(s.log))) {
			t := s.clone()
			label := 1
			if n := len(s.txn); n > 0 {
				label = s.txn[n-1] + 1
			}
			for _, r := range rows {
				t.log, t.txn = append(t.log, r[0]*16+r[1]), append(t.txn, label)
			}
			out = append(out, t)
		}
		i := len(s.lo) - 1
		switch {
		case s.phase == 0:
			t := s.clone()
			t.dom, t.rd, t.lo, t.hi = append(t.dom, all), append(t.rd, 0), append(t.lo, len(t.log)), append(t.hi, -1)
			t.ref = append(t.ref, make([]int, K))
			t.phase = 1
			out = append(out, t)
		case s.phase == 1:
			t := s.clone()
			for k := range K {
				if t.dom[i]&(1<<k) != 0 {
					t.ref[i][k], t.readAt[k] = t.sigma(len(t.log), k), len(t.log)
					t.rd[i] |= 1 << k
					if t.ref[i][k] > 0 {
						t.buf |= 1 << k
					}
				}
			}
			t.phase = 2
			out = append(out, t)
		case s.phase == 2:
			t := s.clone()
			t.hi[i] = len(t.log)
			t.phase = 3
			out = append(out, t)
		case s.phase == 3 && s.pos == s.hi[i]:
			out = append(out, rrClose(s.clone(), cfg))
		case s.phase == 4:
			t := s.clone()
			for k := range K {
				if t.col&(1<<k) == 0 {
					continue
				}
				v := t.sigma(len(t.log), k)
				t.ref[i][k], t.readAt[k] = v, len(t.log)
				for p := t.lo[i] + 1; p <= t.hi[i]; p++ {
					if t.log[p-1]/16 == k && (v > 0 || t.log[p-1]%16 == 0 || t.sigma(p-1, k) == 0) {
						v = t.rrFold(p, v)
					}
				}
				t.emit(k, v, t.hi[i])
			}
			t.known |= t.col
			t.col = 0
			t.closed |= 1 << i
			t.phase = 5
			out = append(out, t)
		}
		p := s.pos + 1
		if p <= len(s.log) && (s.phase != 1 || p <= s.lo[i]) && (s.phase != 3 || p <= s.hi[i]) {
			out = append(out, rrConsume(s.clone(), cfg))
			if s.pos == s.s0 && (len(s.lo) == 0 || s.pos < s.lo[0]) {
				t := s.clone()
				t.pos++
				t.s0++
				out = append(out, t)
			}
		}
		return out
	})
}

func rrConsume(t rrbf, cfg protocols.Config) rrbf {
	t.pos++
	p, i := t.pos, len(t.lo)-1
	k, post := t.log[p-1]/16, t.log[p-1]%16
	update := t.sigma(p-1, k) != 0 && post != 0
	in := (t.phase == 2 || t.phase == 3) && p > t.lo[i] && t.dom[i]&(1<<k) != 0
	if in {
		t.buf &^= 1 << k
	}
	switch {
	case !update:
		t.emit(k, post, p)
	case t.known&(1<<k) != 0:
		t.emit(k, t.rrFold(p, t.out[k]), p)
	case cfg.Mode == RereadApplyDeltas:
		t.emit(k, t.rrFold(p, 1), p)
	default:
		if in {
			t.col |= 1 << k
		}
		return t
	}
	t.known |= 1 << k
	return t
}

func rrClose(t rrbf, cfg protocols.Config) rrbf {
	i := len(t.lo) - 1
	for k := range cfg.Keys {
		if t.buf&(1<<k) != 0 && cfg.Fault != protocols.CopyDropped {
			t.emit(k, t.ref[i][k], t.hi[i])
		}
	}
	need := t.col &^ t.known
	t.known |= t.dom[i] &^ need
	t.buf, t.col = 0, 0
	switch {
	case need == 0:
		t.closed |= 1 << i
		t.phase = 5
	case cfg.Mode == RereadStaleBracket:
		t.col, t.phase = need, 4
	case len(t.lo) < cfg.Chunks:
		t.dom[i] &^= need
		t.rd[i] &^= need
		t.closed |= 1 << i
		t.dom, t.rd, t.lo, t.hi = append(t.dom, need), append(t.rd, 0), append(t.lo, len(t.log)), append(t.hi, -1)
		t.ref = append(t.ref, make([]int, cfg.Keys))
		t.phase = 1
	default:
		t.col, t.phase = need, 6
	}
	return t
}

// Reference: §6.5 (re-read normalization) — exact counts from the
// enumerator above. At 1 value no update exists (a row is inserted or
// deleted whole) and nothing collides; at 2 values with a base row and one
// bracket the racing schedules end stuck, and are counted too.
func TestRereadCounts(t *testing.T) {
	tests := []struct {
		cfg  protocols.Config
		want rwStats
	}{
		{protocols.Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: RereadFresh}, rwStats{33, 41, 6}},
		{protocols.Config{Keys: 1, Values: 2, Events: 2, Chunks: 1, Txn: 1, Mode: RereadFresh, InitialAny: true}, rwStats{1323, 1962, 8}},
		{protocols.Config{Keys: 2, Values: 3, Events: 2, Chunks: 2, Txn: 2, Mode: RereadFresh, Initial: model.Store{2}}, rwStats{5261, 7534, 11}},
		{protocols.Config{Keys: 1, Values: 4, Events: 2, Chunks: 1, Txn: 1, Mode: RereadStaleBracket, InitialAny: true}, rwStats{8557, 12916, 9}},
		{protocols.Config{Keys: 2, Values: 4, Events: 1, Chunks: 1, Txn: 1, Mode: RereadApplyDeltas, InitialAny: true}, rwStats{5725, 7500, 6}},
	}
	for _, tt := range tests {
		t.Run(tt.cfg.String(), func(t *testing.T) {
			if bf := rrEnumerate(tt.cfg); bf != tt.want {
				t.Errorf("enumerator: %+v, want %+v", bf, tt.want)
			}
			// Every state, the stuck ones included: no property, no deadlock.
			r, err := explore.Run(context.Background(), rwOnly[rereadState, rereadAction]{newReread(tt.cfg), nil}, explore.Options{Workers: 2, NoDeadlock: true})
			if err != nil {
				t.Fatal(err)
			}
			got := rwStats{int(r.Stats.Distinct), int(r.Stats.Generated), r.Stats.Depth}
			if got != tt.want {
				t.Errorf("engine: %v %+v, want %+v", r.Verdict, got, tt.want)
			}
		})
	}
}

// Reference: §6.5 (open) — with re-reads under fresh brackets, replay holds
// over every base store; a re-read was needed and its bracket was clean;
// counts do not depend on the number of workers.
func TestRereadFreshPasses(t *testing.T) {
	cfg := protocols.Config{Keys: 2, Values: 4, Events: 1, Chunks: 2, Txn: 1, Mode: RereadFresh, InitialAny: true}
	m := newReread(cfg)
	r1 := rwRun(t, m, 1)
	if r1.Verdict != explore.Pass {
		t.Fatalf("%v: %s: %s\n%s", r1.Verdict, r1.Violation.Property, r1.Violation.Reason, strings.Join(rwSteps(m, r1.Violation), "\n"))
	}
	r2 := rwRun(t, m, 2)
	if r1.Stats.Distinct != r2.Stats.Distinct || r1.Stats.Generated != r2.Stats.Generated || r1.Stats.Depth != r2.Stats.Depth {
		t.Errorf("1 worker: %+v; 2 workers: %+v", r1.Stats, r2.Stats)
	}
	for _, c := range r1.Coverage {
		if c.Count == 0 && c.Name != "stale-reread" {
			t.Errorf("action %s never taken", c.Name)
		}
	}
	for _, name := range []string{"reread-clean", "delta-folded-onto-known-row", "copy-decides-frontier"} {
		if !rwReached(r1, name) {
			t.Errorf("%s not reached", name)
		}
	}
}

// rrRacing is the smallest race: a base row, and two updates that each land
// inside the bracket reading it.
var rrRacing = []string{
	"1. bracket 1 over {k0 k1}: record lo = 0; the consumer may run up to it",
	"2. source commits k0 := 2 at position 1",
	"3. bracket 1 reads {k0 k1} at position 1: k0=2(a1 b0) k1=⊥",
	"4. bracket 1 records hi = 1",
	"5. consume position 1: k0 delta {a:=1}, k0 unknown: withheld; in the window: it collides; buffered row discarded",
	"6. close bracket 1 (0, 1]: emit survivors nothing; {k0} collided: re-select under fresh bracket 2, lo = 1",
	"7. source commits k0 := 1 at position 2",
	"8. bracket 2 reads {k0} at position 2: k0=1(a0 b0)",
	"9. bracket 2 records hi = 2",
	"10. consume position 2: k0 delta {a:=0}, k0 unknown: withheld; in the window: it collides; buffered row discarded",
	"11. close bracket 2 (1, 2]: emit survivors nothing; {k0} collided again and all 2 brackets are used: the re-reads have not finished",
}

// Reference: §6.5 (open), the termination half — re-reads racing new deltas
// are reported with their trace; without the property the same schedule is a
// deadlock; with a bracket more than the source has updates, it holds.
func TestRereadTermination(t *testing.T) {
	cfg := protocols.Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1, Mode: RereadFresh, Initial: model.Store{1}}
	m := newReread(cfg)
	r := rwRun(t, rwOnly[rereadState, rereadAction]{m, []string{RereadTerminates.Name}}, 2)
	want := "bracket 2 (1, 2] was raced by 2:k0=1/t2 delta {a:=0}: k0 needs bracket 3, beyond chunks = 2"
	if r.Violation == nil || r.Violation.Reason != want || !slices.Equal(rwSteps(m, r.Violation), rrRacing) {
		t.Fatalf("got %v\n%s", r.Verdict, strings.Join(rwSteps(m, r.Violation), "\n"))
	}
	r = rwRun(t, rwOnly[rereadState, rereadAction]{m, []string{invariants.FinalReplay.Name}}, 2)
	if steps := rwSteps(m, r.Violation); r.Verdict != explore.Violated || r.Violation.Property != "deadlock" || len(steps) < 11 || !slices.Equal(steps[:11], rrRacing) {
		t.Errorf("final-replay alone: %v\n%s", r.Verdict, strings.Join(rwSteps(m, r.Violation), "\n"))
	}
	cfg.Keys, cfg.Chunks = 3, 3
	if r := rwRun(t, newReread(cfg), 2); r.Verdict != explore.Pass || !rwReached(r, "reread-clean") {
		t.Errorf("chunks = 3 > events = 2: %v", r.Verdict)
	}
}

// Reference: §6.5 (open), S-IMG — each broken mode loses an update at rest,
// and its emitted row is not the key's image at its tag.
func TestRereadBrokenModes(t *testing.T) {
	tests := []struct {
		cfg    protocols.Config
		inv    string
		steps  []string
		reason string
	}{
		{protocols.Config{Keys: 1, Values: 2, Events: 2, Chunks: 1, Txn: 1, Mode: RereadStaleBracket, Initial: model.Store{1}}, invariants.FinalReplay.Name, []string{
			"1. bracket 1 over {k0}: record lo = 0; the consumer may run up to it",
			"2. source commits k0 := 2 at position 1",
			"3. bracket 1 reads {k0} at position 1: k0=2(a1 b0)",
			"4. bracket 1 records hi = 1",
			"5. source commits k0 := 1 at position 2",
			"6. consume position 1: k0 delta {a:=1}, k0 unknown: withheld; in the window: it collides; buffered row discarded",
			"7. close bracket 1 (0, 1]: emit survivors nothing; {k0} collided: re-read under the same bracket",
			"8. consume position 2: k0 delta {a:=0}, k0 unknown: withheld",
			"9. re-read {k0} at position 2 as if inside (0, 1], folding that window's events onto it: emit k0=2@1",
		}, "at rest after position 2, key k0: sink holds 2, source holds 1"},
		{protocols.Config{Keys: 1, Values: 4, Events: 1, Chunks: 1, Txn: 1, Mode: RereadApplyDeltas, Initial: model.Store{2}}, invariants.FinalReplay.Name, []string{
			"1. bracket 1 over {k0}: record lo = 0; the consumer may run up to it",
			"2. source commits k0 := 4 at position 1",
			"3. bracket 1 reads {k0} at position 1: k0=4(a1 b1)",
			"4. bracket 1 records hi = 1",
			"5. consume position 1: k0 delta {b:=1}, emits k0=3@1; buffered row discarded",
			"6. close bracket 1 (0, 1]: emit survivors nothing; no collision: every key settled",
		}, "at rest after position 1, key k0: sink holds 3, source holds 4"},
		{protocols.Config{Keys: 1, Values: 4, Events: 1, Chunks: 1, Txn: 1, Mode: RereadApplyDeltas, Initial: model.Store{2}}, RereadImages.Name, []string{
			"1. source commits k0 := 4 at position 1",
			"2. consume position 1: k0 delta {b:=1}, emits k0=3@1",
		}, "key k0: emitted 3(a0 b1) tagged 1, but its image there is 4(a1 b1)"},
	}
	for _, tt := range tests {
		t.Run(tt.cfg.Mode+"/"+tt.inv, func(t *testing.T) {
			m := newReread(tt.cfg)
			r := rwRun(t, rwOnly[rereadState, rereadAction]{m, []string{tt.inv}}, 2)
			if r.Violation == nil || r.Violation.Property != tt.inv || r.Violation.Reason != tt.reason || !slices.Equal(rwSteps(m, r.Violation), tt.steps) {
				t.Fatalf("got %v %v\n%s", r.Verdict, r.Violation, strings.Join(rwSteps(m, r.Violation), "\n"))
			}
		})
	}
	// stale-bracket breaks the obligation too: the re-read row, folded with
	// the old window's deltas, is not the key's image at its tag.
	stale := newReread(protocols.Config{Keys: 1, Values: 2, Events: 2, Chunks: 1, Txn: 1, Mode: RereadStaleBracket, Initial: model.Store{1}})
	if r := rwRun(t, rwOnly[rereadState, rereadAction]{stale, []string{RereadImages.Name}}, 2); r.Violation == nil || r.Violation.Property != RereadImages.Name {
		t.Errorf("stale-bracket: %s holds (%v)", RereadImages.Name, r.Verdict)
	}
	// The omitted column is what apply-deltas loses: with one column (3
	// values give no row with both set) a delta is the whole row.
	cfg := protocols.Config{Keys: 2, Values: 3, Events: 2, Chunks: 2, Txn: 1, Mode: RereadApplyDeltas, InitialAny: true}
	if r := rwRun(t, newReread(cfg), 2); r.Verdict != explore.Pass {
		t.Errorf("apply-deltas at 3 values: %v", r.Verdict)
	}
}

// Reference: §10 — Decode inverts Encode on every reachable state.
func TestRereadEncodeDecode(t *testing.T) {
	cfg := protocols.Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1, Mode: RereadFresh, Initial: model.Store{1, 2}}
	m := newReread(cfg)
	seen := map[string]bool{}
	queue := m.Init()
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		b := m.Encode(&s, nil)
		if seen[string(b)] {
			continue
		}
		seen[string(b)] = true
		want := s
		want.Cap.Dup, want.Cap.Inexact = 0, 0 // marks of the step, not part of the state
		var d rereadState
		if err := m.Decode(b, &d); err != nil || d != want {
			t.Fatalf("Decode(Encode(s)) = %+v, %v; want %+v", d, err, want)
		}
		for _, a := range m.Actions(&s, nil) {
			if t2 := s; m.Next(&s, a, &t2) {
				queue = append(queue, t2)
			}
		}
	}
}

// Reference: §6.5 (open) — every quick reread spec file gives its verdict.
func TestRereadSpecs(t *testing.T) { rwSpecs(t, "reread") }
