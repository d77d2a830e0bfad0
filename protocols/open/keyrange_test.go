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
	"github.com/cutcheck/cutcheck/specs"
)

// ---- helpers shared by the open disciplines' tests ----

// kvRun explores m on two workers, checking only the named properties, or
// when none is named every property, the opt-in no-duplicate-delivery too.
func kvRun[S, A any](t *testing.T, m explore.Model[S, A], only ...string) *explore.Result[S, A] {
	t.Helper()
	o := explore.Options{Workers: 2, Only: only}
	if len(only) == 0 {
		o.With = []string{invariants.NoDuplicate.Name}
	}
	r, err := explore.Run(context.Background(), m, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// kvSteps renders a violation's trace in the model's words, one line a step.
func kvSteps[S, A any](m explore.Model[S, A], v *explore.Violation[S, A]) []string {
	var out []string
	for i := 1; i < len(v.Trace); i++ {
		out = append(out, m.Describe(&v.Trace[i-1].State, v.Trace[i].Action))
	}
	return out
}

// kvFail checks that r failed prop and returns the violation.
func kvFail[S, A any](t *testing.T, m explore.Model[S, A], r *explore.Result[S, A], prop string) *explore.Violation[S, A] {
	t.Helper()
	if r.Verdict != explore.Violated || r.Violation.Property != prop {
		t.Fatalf("verdict %v (%s), want %s violated", r.Verdict, kvViolated(m, r), prop)
	}
	t.Logf("%s: %s\n  %s", prop, r.Violation.Reason, strings.Join(kvSteps(m, r.Violation), "\n  "))
	return r.Violation
}

// kvPass checks a passing run whose every sometimes-property is reached
// and every kind of action taken.
func kvPass[S, A any](t *testing.T, m explore.Model[S, A], r *explore.Result[S, A]) {
	t.Helper()
	if r.Verdict != explore.Pass {
		t.Fatalf("verdict %v: %s", r.Verdict, kvViolated(m, r))
	}
	if len(r.Sometimes) == 0 {
		t.Fatal("no sometimes-properties")
	}
	for _, s := range r.Sometimes {
		if !s.Reached {
			t.Errorf("%s not reached", s.Name)
		}
	}
	for _, c := range r.Coverage {
		if c.Count == 0 {
			t.Errorf("action %s never taken", c.Name)
		}
	}
}

// kvViolated renders r's violation, if any: property, reason and steps.
func kvViolated[S, A any](m explore.Model[S, A], r *explore.Result[S, A]) string {
	if r.Violation == nil {
		return "no violation"
	}
	return fmt.Sprintf("%s: %s\n  %s", r.Violation.Property, r.Violation.Reason, strings.Join(kvSteps(m, r.Violation), "\n  "))
}

// kvReached reports whether the named sometimes-property was reached.
func kvReached(rs []explore.Reach, name string) bool {
	return slices.ContainsFunc(rs, func(r explore.Reach) bool { return r.Name == name && r.Reached })
}

// kvSpecs runs every quick embedded spec of the protocol (its broken modes)
// and checks each verdict; the passing specs, a few seconds each, are for
// cutcheck run and reproduce.
func kvSpecs(t *testing.T, protocol string, want int) {
	all, err := specs.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range all {
		if s.Protocol != protocol || !s.Quick {
			continue
		}
		n++
		t.Run(s.Name, func(t *testing.T) {
			o, err := specs.Run(context.Background(), s, explore.Options{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if !o.OK {
				t.Errorf("%s: %s", s.Name, o.Why)
			}
		})
	}
	if n != want {
		t.Errorf("%d quick specs of %s, want %d", n, protocol, want)
	}
}

// kvReachable is every state reachable from m's initial states.
func kvReachable[S comparable, A any](m explore.Model[S, A]) []S {
	seen := map[S]bool{}
	var all []S
	for level := m.Init(); len(level) > 0; {
		var next []S
		for _, s := range level {
			if seen[s] {
				continue
			}
			seen[s] = true
			all = append(all, s)
			for _, a := range m.Actions(&s, nil) {
				if u := s; m.Next(&s, a, &u) {
					next = append(next, u)
				}
			}
		}
		level = next
	}
	return all
}

// kvRoundTrip checks Decode(Encode(s)) == s on every reachable state.
func kvRoundTrip[S comparable, A any](t *testing.T, m explore.Model[S, A]) {
	t.Helper()
	all := kvReachable(m)
	for _, s := range all {
		// Equal encodings: what identifies a state (Capture.Dup, a mark of
		// the step, is not part of it).
		var got S
		err := m.Decode(m.Encode(&s, nil), &got)
		if err != nil || string(m.Encode(&got, nil)) != string(m.Encode(&s, nil)) {
			t.Fatalf("state %v: decoded %v, %v", m.Encode(&s, nil), m.Encode(&got, nil), err)
		}
	}
	if err := m.Decode([]byte{1, 2, 3}, new(S)); err == nil {
		t.Error("a short encoding decoded")
	}
	t.Logf("%d states round-tripped", len(all))
}

// kvCount is what a brute-force search found.
type kvCount struct{ distinct, generated, depth int }

// kvSearch is a plain breadth-first search with a map of state keys.
func kvSearch[S any](inits []S, key func(S) string, next func(S) []S) kvCount {
	var r kvCount
	seen := map[string]bool{}
	var level []S
	for _, s := range inits {
		if k := key(s); !seen[k] {
			seen[k] = true
			level = append(level, s)
		}
	}
	for {
		var nl []S
		for _, s := range level {
			for _, t := range next(s) {
				r.generated++
				if k := key(t); !seen[k] {
					seen[k] = true
					nl = append(nl, t)
				}
			}
		}
		if len(nl) == 0 {
			break
		}
		r.depth++
		level = nl
	}
	r.distinct = len(seen)
	return r
}

// kvRow is a committed row: key, value (0 = ⊥), transaction label and, for
// version-max, the version it carries.
type kvRow struct{ key, val, txn, ver int }

// kvSigma is key k's value after the first n rows over the base store.
func kvSigma(base []int, log []kvRow, n, k int) int {
	v := base[k]
	for _, e := range log[:n] {
		if e.key == k {
			v = e.val
		}
	}
	return v
}

// kvTxns is every transaction of 1..room rows on distinct keys, in every
// order, each row giving its key a value other than its current one.
func kvTxns(base []int, log []kvRow, values, room int) [][]kvRow {
	var out [][]kvRow
	var rec func(t []kvRow, used int)
	rec = func(t []kvRow, used int) {
		for k := range base {
			if used&(1<<k) != 0 {
				continue
			}
			for v := 0; v <= values; v++ {
				if v == kvSigma(base, log, len(log), k) {
					continue
				}
				t2 := append(slices.Clone(t), kvRow{key: k, val: v})
				out = append(out, t2)
				if len(t2) < room {
					rec(t2, used|1<<k)
				}
			}
		}
	}
	if room > 0 {
		rec(nil, 0)
	}
	return out
}

// kvStores is every base store over keys and values, or the empty one.
func kvStores(keys, values int, any bool) [][]int {
	out := [][]int{make([]int, keys)}
	for k := 0; any && k < keys; k++ {
		var next [][]int
		for _, st := range out {
			for v := 0; v <= values; v++ {
				t := slices.Clone(st)
				t[k] = v
				next = append(next, t)
			}
		}
		out = next
	}
	return out
}

// kvCommit appends rows as the next transaction, each with version ver.
func kvCommit(log []kvRow, rows []kvRow, ver int) []kvRow {
	label := 1
	if len(log) > 0 {
		label = log[len(log)-1].txn + 1
	}
	log = slices.Clone(log)
	for _, r := range rows {
		r.txn, r.ver = label, ver
		log = append(log, r)
	}
	return log
}

// ---- key-range gating ----

func krModel(cfg protocols.Config) *keyrange {
	return &keyrange{cfg, KeyrangeParts{}.withMode(cfg.Mode)}
}

// Reference: §6.5 key-range gating — with an advancing read view every
// invariant and both parts of the obligation hold, and every race is reached
// (an ahead-of-cursor change discarded and then supplied by the copy).
func TestKeyrangeAdvancingPasses(t *testing.T) {
	for _, cfg := range []protocols.Config{
		{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1, Mode: KeyrangeAdvancing, InitialAny: true},
		{Keys: 3, Values: 1, Events: 3, Chunks: 2, Txn: 2, Mode: KeyrangeAdvancing},
	} {
		t.Run(cfg.String(), func(t *testing.T) {
			m := krModel(cfg)
			r := kvRun(t, m)
			kvPass(t, m, r)
			if !kvReached(r.Sometimes, "discarded-change-copied") {
				t.Error("no discarded change was supplied by a later copy")
			}
		})
	}
}

// Reference: §6.5 — "discarding an observed ahead-of-cursor event and then
// fetching that row from an older snapshot loses the discarded change". The
// shortest lost update: k1's change is discarded while k1 is ahead of the
// cursor, then k1 is copied from the snapshot taken before it.
func TestKeyrangeFrozenLosesUpdate(t *testing.T) {
	m := krModel(protocols.Config{Keys: 2, Values: 1, Events: 1, Chunks: 2, Txn: 1, Mode: KeyrangeFrozen})
	v := kvFail(t, m, kvRun(t, m, invariants.FinalReplay.Name), invariants.FinalReplay.Name)
	if len(v.Trace)-1 != 4 {
		t.Errorf("%d steps, want 4", len(v.Trace)-1)
	}
	last := v.Trace[len(v.Trace)-1].State
	k1 := model.Key(1)
	switch {
	case last.Disc[k1] != 1 || last.Cap.ReadAt[k1] != 0:
		t.Errorf("k1 discarded at %d, read at %d; want the event at 1 discarded and k1 read at the snapshot 0", last.Disc[k1], last.Cap.ReadAt[k1])
	case last.Cap.Out.Val[k1] != model.Absent || last.Cap.Log.Sigma(1, k1) != 1:
		t.Errorf("sink k1 = %v, source %v; want the lost update ⊥ against 1", last.Cap.Out.Val[k1], last.Cap.Log.Sigma(1, k1))
	case !strings.HasPrefix(v.Reason, "at rest after position 1, key k1"):
		t.Errorf("reason %q does not name k1", v.Reason)
	}
	// The discard comes before k1's copy, which reads the older snapshot.
	ss := kvSteps(m, v)
	discard := slices.IndexFunc(ss, func(s string) bool { return strings.HasPrefix(s, "discard k1 := 1 at position 1") })
	copyK1 := slices.IndexFunc(ss, func(s string) bool { return strings.HasPrefix(s, "copy k1 = ⊥ at coordinate 0 (the snapshot") })
	if discard < 0 || copyK1 < discard {
		t.Errorf("steps %q: want k1's event discarded, then k1 copied from the snapshot", ss)
	}
	// The obligation's second part fails on the same run, at the copy.
	r := kvRun(t, m, KeyrangeFreshRefresh.Name)
	if v := kvFail(t, m, r, KeyrangeFreshRefresh.Name); len(v.Trace)-1 != 4 {
		t.Errorf("fresh-refresh: %d steps, want 4", len(v.Trace)-1)
	}
	// The first part holds: the frozen capture's cursor is monotone.
	if r := kvRun(t, m, KeyrangeMonotoneCursor.Name); r.Verdict != explore.Pass {
		t.Errorf("monotone-cursor: %v", r.Verdict)
	}
}

// Reference: §6.5 — "a non-monotone visit order breaks the first" part: k1's
// range is copied first, the cursor moves back to k0, and k1's later change
// is discarded with no copy left to supply it.
func TestKeyrangeNonmonotoneLosesUpdate(t *testing.T) {
	m := krModel(protocols.Config{Keys: 2, Values: 1, Events: 1, Chunks: 2, Txn: 1, Mode: KeyrangeNonmonotone})
	v := kvFail(t, m, kvRun(t, m, KeyrangeMonotoneCursor.Name), KeyrangeMonotoneCursor.Name)
	if got := kvSteps(m, v); !slices.Equal(got, []string{
		"copy k1 = ⊥ at coordinate 0; cursor → k1",
		"copy k0 = ⊥ at coordinate 0; cursor → k0 (back from k1)",
	}) {
		t.Errorf("monotone-cursor trace %q", got)
	}

	v = kvFail(t, m, kvRun(t, m, invariants.FinalReplay.Name), invariants.FinalReplay.Name)
	ss := kvSteps(m, v)
	back := slices.IndexFunc(ss, func(s string) bool { return strings.HasSuffix(s, "cursor → k0 (back from k1)") })
	discard := slices.IndexFunc(ss, func(s string) bool { return strings.HasPrefix(s, "discard k1 := 1") })
	if len(ss) != 4 || back < 0 || discard < back {
		t.Errorf("final-replay trace %q: want 4 steps, the cursor back to k0 before k1's change is discarded", ss)
	}
	last := v.Trace[len(v.Trace)-1].State
	if last.Cap.Out.Val[1] != model.Absent || last.Cap.Log.Sigma(last.Cap.Pos, 1) != 1 || last.Disc[1] <= last.Cap.ReadAt[1] {
		t.Errorf("k1: sink %v, source %v, discarded at %d, read at %d", last.Cap.Out.Val[1], last.Cap.Log.Sigma(last.Cap.Pos, 1), last.Disc[1], last.Cap.ReadAt[1])
	}
}

// Reference: §6.5 — each broken mode's full verdict (every invariant, the
// opt-in one too): the first invariant its shortest counterexample breaks,
// and how many steps that takes. KeyrangeNonmonotone repeats a tag: a key below
// the moved cursor has its event applied before its own range is copied at
// the same position, as a copied row: the delivery claim holds.
func TestKeyrangeModeVerdicts(t *testing.T) {
	for _, tt := range []struct {
		mode, first string
		steps       int
	}{
		{KeyrangeFrozen, invariants.FinalReplay.Name, 4},
		{KeyrangeNonmonotone, KeyrangeMonotoneCursor.Name, 2},
	} {
		m := krModel(protocols.Config{Keys: 2, Values: 1, Events: 1, Chunks: 2, Txn: 1, Mode: tt.mode})
		if v := kvFail(t, m, kvRun(t, m), tt.first); len(v.Trace)-1 != tt.steps {
			t.Errorf("%s: %d steps, want %d", tt.mode, len(v.Trace)-1, tt.steps)
		}
	}
	// The copy repeats the event's tag as a copied row, not the event
	// again: no log event is delivered twice (model.Capture.EmitCopy).
	m := krModel(protocols.Config{Keys: 2, Values: 1, Events: 1, Chunks: 2, Txn: 1, Mode: KeyrangeNonmonotone})
	if r := kvRun(t, m, invariants.NoDuplicate.Name); r.Verdict != explore.Pass {
		t.Errorf("no-duplicate-delivery: %v", r.Verdict)
	}
}

// Reference: §6.1, §6.5 — with a monotone cursor the gate is an emission in
// the kit's sense (model.Emission): an event of a key whose range was copied
// at coordinate h passes only beyond h, and the range's present reads are
// its close entries at h. At rest the one-pass stream replays to what the
// model's sink holds (and, when the view advances, to the source), with
// monotone tags.
func TestKeyrangeIsAnEmission(t *testing.T) {
	for _, mode := range []string{KeyrangeAdvancing, KeyrangeFrozen} {
		cfg := protocols.Config{Keys: 3, Values: 1, Events: 3, Chunks: 2, Txn: 2, Mode: mode, InitialAny: true}
		n := 0
		for _, s := range kvReachable(krModel(cfg)) {
			c := &s.Cap
			if !c.AllClosed(cfg.Chunks) || c.Pos != c.Log.Len() {
				continue
			}
			n++
			p := &c.Plan
			st := model.Emission(p, &c.Log, c.Start, c.Pos,
				func(i int, pos model.Coord) bool { return pos > p.Units[i].Hi },
				func(u *model.Unit, k model.Key) (model.Value, bool) {
					return u.Refresh[k], u.Refresh[k] != model.Absent
				})
			if ok, at := st.Monotone(); !ok {
				t.Fatalf("%s: %v is not monotone at %d", mode, st, at)
			}
			want := c.Log.State(c.Pos)
			if got := st.Replay(); got != c.Out.Val || mode == KeyrangeAdvancing && got != want {
				t.Fatalf("%s: emission %v replays to %v; the model's sink holds %v, the source %v", mode, st, got, c.Out.Val, want)
			}
		}
		if n < 1000 {
			t.Errorf("%s: only %d states at rest", mode, n)
		}
	}
}

// The state codec is exact: the queue holds states as bytes.
func TestKeyrangeEncodeDecode(t *testing.T) {
	for _, mode := range []string{KeyrangeFrozen, KeyrangeNonmonotone} {
		kvRoundTrip(t, krModel(protocols.Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 2, Mode: mode, InitialAny: true}))
	}
}

// Reference: §6.5 — the spec files of the broken modes give their verdicts.
func TestKeyrangeSpecs(t *testing.T) { kvSpecs(t, "keyrange", 2) }

// Reference: §6.5 — exact counts from an independent enumerator (krEnumerate).
//
// By hand at K=1 V=1 E=1 C=1 (advancing): x = k0 := 1 and the one copy C.
// S0 {}; commit → S1 [x]; copy → S2 (C at 0 reads ⊥). From S1: copy → S3
// (C at 0 reads ⊥), consume → S4 (x discarded, k0 ahead), start-later →
// S5 (s0 = 1). S2 commits into S3. S3 consume → S6 (x applied); S4 copy → S7
// (C at 1 reads 1, after the discard); S5 copy → S8 (C at 1 with s0 = 1).
// 9 distinct, 9 generated (2+3+1+1+1+1), depth 3 (S0 S1 S4 S7).
func TestKeyrangeCounts(t *testing.T) {
	for _, tt := range []struct {
		cfg                        protocols.Config
		distinct, generated, depth int
		holds                      string // an invariant that holds in the mode, checked while counting
	}{
		{protocols.Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: KeyrangeAdvancing}, 9, 9, 3, invariants.FinalReplay.Name},
		{protocols.Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 2, Mode: KeyrangeAdvancing, InitialAny: true}, 6291, 8082, 6, invariants.FinalReplay.Name},
		{protocols.Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, Mode: KeyrangeFrozen}, 151, 198, 6, KeyrangeMonotoneCursor.Name},
		{protocols.Config{Keys: 3, Values: 1, Events: 2, Chunks: 3, Txn: 1, Mode: KeyrangeNonmonotone}, 2527, 3291, 7, invariants.Monotonic.Name},
	} {
		t.Run(tt.cfg.String(), func(t *testing.T) {
			bf := krEnumerate(tt.cfg)
			if bf.distinct != tt.distinct || bf.generated != tt.generated || bf.depth != tt.depth {
				t.Errorf("enumerator: %+v, want %d distinct, %d generated, depth %d", bf, tt.distinct, tt.generated, tt.depth)
			}
			m := krModel(tt.cfg)
			r, err := explore.Run(context.Background(), m, explore.Options{Workers: 2, Only: []string{tt.holds}})
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict != explore.Pass {
				t.Errorf("%s: %v", tt.holds, r.Verdict)
			}
			if got := (kvCount{int(r.Stats.Distinct), int(r.Stats.Generated), r.Stats.Depth}); got != bf {
				t.Errorf("engine %+v, enumerator %+v", got, bf)
			}
		})
	}
}

// krBF is a key-range gating state in the enumerator's own terms.
type krBF struct {
	base      []int
	log       []kvRow
	pos, s0   int
	copies    []krBFCopy // in visit order
	cursor    int        // -1: nothing copied
	out, tag  []int      // the sink: value and tag of each key's last entry
	dup       []bool
	readAt    []int
	discarded []int // position of each key's last discarded event
}

type krBFCopy struct {
	chunk, at int   // range, and the consumer's position when the cursor moved
	vals      []int // values read, per key of the range
}

func (s krBF) key() string {
	return fmt.Sprint(s.base, s.log, s.pos, s.s0, s.copies, s.cursor, s.out, s.tag, s.readAt, s.discarded)
}

func (s krBF) clone() krBF {
	t := s
	t.copies = slices.Clone(s.copies)
	t.out, t.tag, t.dup = slices.Clone(s.out), slices.Clone(s.tag), slices.Clone(s.dup)
	t.readAt, t.discarded = slices.Clone(s.readAt), slices.Clone(s.discarded)
	return t
}

// emit is one entry reaching the sink.
func (s *krBF) emit(k, v, tag int) {
	s.dup[k] = s.dup[k] || tag != 0 && tag == s.tag[k]
	s.out[k], s.tag[k] = v, tag
}

// krEnumerate enumerates key-range gating from §6.5's words: the source
// commits at any time; the copier takes the ranges (in key order, or any
// order when nonmonotone) while the consumer is between transactions,
// reading each at the consumer's position (frozen: at the first copy's) and
// moving the cursor to the range's last key; the consumer applies an event
// at or below the cursor and discards it above; before the first copy its
// start may move on.
func krEnumerate(cfg protocols.Config) kvCount {
	K, C := cfg.Keys, cfg.Chunks
	var inits []krBF
	for _, b := range kvStores(K, cfg.Values, cfg.InitialAny) {
		inits = append(inits, krBF{base: b, cursor: -1, out: make([]int, K), tag: make([]int, K), dup: make([]bool, K),
			readAt: make([]int, K), discarded: make([]int, K)})
	}
	return kvSearch(inits, krBF.key, func(s krBF) []krBF {
		var out []krBF
		for _, rows := range kvTxns(s.base, s.log, cfg.Values, min(cfg.Txn, cfg.Events-len(s.log))) {
			t := s.clone()
			t.log = kvCommit(t.log, rows, 0)
			out = append(out, t)
		}
		boundary := s.pos == 0 || s.pos == len(s.log) || s.log[s.pos-1].txn != s.log[s.pos].txn
		for i := 0; i < C && boundary; i++ {
			done := slices.ContainsFunc(s.copies, func(c krBFCopy) bool { return c.chunk == i })
			if done || cfg.Mode != KeyrangeNonmonotone && i != len(s.copies) {
				continue
			}
			t := s.clone()
			at := t.pos
			if cfg.Mode == KeyrangeFrozen && len(t.copies) > 0 {
				at = t.copies[0].at
			}
			c := krBFCopy{chunk: i, at: t.pos}
			for k := i * K / C; k < (i+1)*K/C; k++ {
				v := kvSigma(t.base, t.log, at, k)
				c.vals = append(c.vals, v)
				t.readAt[k] = at
				if v != 0 {
					t.emit(k, v, t.pos)
				}
				t.cursor = k
			}
			t.copies = append(t.copies, c)
			out = append(out, t)
		}
		if s.pos < len(s.log) {
			t := s.clone()
			t.pos++
			if e := t.log[t.pos-1]; e.key > t.cursor {
				t.discarded[e.key] = t.pos
			} else {
				t.emit(e.key, e.val, t.pos)
			}
			out = append(out, t)
			if s.pos == s.s0 && len(s.copies) == 0 {
				t := s.clone()
				t.pos++
				t.s0++
				out = append(out, t)
			}
		}
		return out
	})
}
