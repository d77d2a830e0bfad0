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

// ---- helpers shared by the rewind and reread tests ----

// rwRun explores m with the given number of workers.
func rwRun[S, A any](t *testing.T, m explore.Model[S, A], workers int) *explore.Result[S, A] {
	t.Helper()
	r, err := explore.Run(context.Background(), m, explore.Options{Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// rwOnly is m with its always- and transition-properties cut down to the
// named ones (sometimes-properties are kept), so that one invariant's own
// shortest counterexample is found.
type rwOnly[S, A any] struct {
	explore.Model[S, A]
	names []string
}

func (o rwOnly[S, A]) Properties() []explore.Property[S, A] {
	var out []explore.Property[S, A]
	for _, p := range o.Model.Properties() {
		if p.Kind == explore.Sometimes || slices.Contains(o.names, p.Name) {
			out = append(out, p)
		}
	}
	return out
}

func (o rwOnly[S, A]) Done(s *S) bool { return o.Model.(explore.Doner[S]).Done(s) }

// rwSteps is a violation's trace in the model's words, one line per step.
func rwSteps[S, A any](m explore.Model[S, A], v *explore.Violation[S, A]) []string {
	if v == nil {
		return nil
	}
	var out []string
	for i := 1; i < len(v.Trace); i++ {
		out = append(out, fmt.Sprintf("%d. %s", i, m.Describe(&v.Trace[i-1].State, v.Trace[i].Action)))
	}
	return out
}

// rwReached reports whether the named sometimes-property was reached.
func rwReached[S, A any](r *explore.Result[S, A], name string) bool {
	for _, s := range r.Sometimes {
		if s.Name == name {
			return s.Reached
		}
	}
	return false
}

// rwSpecs runs the protocol's embedded specs that expect a failure and
// checks their verdicts and traces (the passing ones are larger: package
// specs runs the quick ones, cutcheck reproduce all).
func rwSpecs(t *testing.T, protocol string) {
	all, err := specs.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range all {
		if s.Protocol != protocol || s.Expect == "pass" {
			continue
		}
		n++
		t.Run(s.Name, func(t *testing.T) {
			o, err := specs.Run(context.Background(), s, explore.Options{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if !o.OK || o.Report.Violation == nil || len(o.Report.Violation.Steps) == 0 {
				t.Errorf("%s: %s (no trace: %v)", s.Name, o.Why, o.Report.Violation == nil)
			}
		})
	}
	if n < 2 {
		t.Errorf("%d specs of %s", n, protocol)
	}
}

// rwStats is what an enumerator counts.
type rwStats struct{ distinct, generated, depth int }

// rwSearch is a plain breadth-first search over states named by key().
func rwSearch[S interface{ key() string }](inits []S, next func(S) []S) rwStats {
	var r rwStats
	seen := map[string]bool{}
	var level []S
	for _, s := range inits {
		if !seen[s.key()] {
			seen[s.key()] = true
			level = append(level, s)
		}
	}
	for len(level) > 0 {
		var nl []S
		for _, s := range level {
			for _, t := range next(s) {
				r.generated++
				if k := t.key(); !seen[k] {
					seen[k] = true
					nl = append(nl, t)
				}
			}
		}
		if len(nl) > 0 {
			r.depth++
		}
		level = nl
	}
	r.distinct = len(seen)
	return r
}

// rwTxns is every transaction a source may commit over the current values
// cur: 1..room rows on distinct keys, in every order, each changing its key.
func rwTxns(cur []int, values, room int) [][][2]int {
	var out [][][2]int
	var rec func(t [][2]int, used int)
	rec = func(t [][2]int, used int) {
		for k := range cur {
			for v := 0; v <= values && used&(1<<k) == 0; v++ {
				if v == cur[k] {
					continue
				}
				t2 := append(slices.Clone(t), [2]int{k, v})
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

// rwStores is every base store over the keys and values (InitialAny), or
// the run's one base store.
func rwStores(cfg protocols.Config) [][]int {
	keys, values := cfg.Keys, cfg.Values
	out := [][]int{make([]int, keys)}
	for k := range keys {
		out[0][k] = int(cfg.Initial[k])
	}
	for k := 0; k < keys && cfg.InitialAny; k++ {
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

// ---- an independent enumerator for rewind (§6.5) ----

// rwbf is one state: the log as (key, value, transaction) rows over a base
// store, the chunks started (low edge and rolled-back refresh), where each
// key was read, the consumer and the emitted replay (value, tag, and
// whether an entry repeated the tag before it).
type rwbf struct {
	base, log, lo []int
	logTxn        []int
	refresh       [][]int // per chunk started: per key, -1 if not in the chunk
	readAt        []int
	phase         int // 0 idle, 1 low recorded, 2 rolled back
	pos, s0       int
	out, tag      []int
	dup           []bool
}

func (s rwbf) key() string {
	return fmt.Sprint(s.base, s.log, s.logTxn, s.lo, s.refresh, s.readAt, s.phase, s.pos, s.s0, s.out, s.tag)
}

func (s rwbf) clone() rwbf {
	t := s
	t.log, t.logTxn, t.lo, t.readAt = slices.Clone(s.log), slices.Clone(s.logTxn), slices.Clone(s.lo), slices.Clone(s.readAt)
	t.out, t.tag, t.dup = slices.Clone(s.out), slices.Clone(s.tag), slices.Clone(s.dup)
	t.refresh = nil
	for _, r := range s.refresh {
		t.refresh = append(t.refresh, slices.Clone(r))
	}
	return t
}

// sigma is key k's value after the first n events (the log holds key*16+value).
func (s rwbf) sigma(n, k int) int {
	v := s.base[k]
	for _, e := range s.log[:n] {
		if e/16 == k {
			v = e % 16
		}
	}
	return v
}

func (s *rwbf) emit(k, v, tag int) {
	s.dup[k] = s.dup[k] || tag != 0 && tag == s.tag[k]
	s.out[k], s.tag[k] = v, tag
}

// rwEnumerate: the source commits at any time; per chunk (in key order) the
// capture records lo, reads the chunk at the log's end r and undoes, newest
// first, every event of (lo, r] of each of its keys by that event's before-
// image, then splices the result at lo once the consumer stands there; the
// consumer walks the log from s0 (which may move on while nothing is
// consumed, up to the first lo), never past the open chunk's lo.
func rwEnumerate(cfg protocols.Config) rwStats {
	K, C := cfg.Keys, cfg.Chunks
	var inits []rwbf
	for _, b := range rwStores(cfg) {
		inits = append(inits, rwbf{base: b, readAt: make([]int, K), out: make([]int, K), tag: make([]int, K), dup: make([]bool, K)})
	}
	return rwSearch(inits, func(s rwbf) []rwbf {
		var out []rwbf
		cur := make([]int, K)
		for k := range cur {
			cur[k] = s.sigma(len(s.log), k)
		}
		for _, rows := range rwTxns(cur, cfg.Values, min(cfg.Txn, cfg.Events-len(s.log))) {
			t := s.clone()
			label := 1
			if n := len(s.logTxn); n > 0 {
				label = s.logTxn[n-1] + 1
			}
			for _, r := range rows {
				t.log, t.logTxn = append(t.log, r[0]*16+r[1]), append(t.logTxn, label)
			}
			out = append(out, t)
		}
		i := len(s.lo) - 1
		switch {
		case s.phase == 0 && len(s.lo) < C:
			t := s.clone()
			t.lo = append(t.lo, len(t.log))
			t.refresh = append(t.refresh, slices.Repeat([]int{-1}, K))
			t.phase = 1
			out = append(out, t)
		case s.phase == 1:
			t := s.clone()
			r := len(t.log)
			for k := i * K / C; k < (i+1)*K/C; k++ {
				v := t.sigma(r, k)
				for p := r; p > t.lo[i]; p-- {
					if t.log[p-1]/16 == k {
						v = t.sigma(p-1, k)
					}
				}
				t.refresh[i][k], t.readAt[k] = v, r
			}
			t.phase = 2
			out = append(out, t)
		case s.phase == 2 && s.pos == s.lo[i]:
			t := s.clone()
			for k, v := range t.refresh[i] {
				if v > 0 {
					t.emit(k, v, t.lo[i])
				}
			}
			t.phase = 0
			out = append(out, t)
		}
		if s.pos < len(s.log) && (s.phase == 0 || s.pos+1 <= s.lo[i]) {
			t := s.clone()
			t.pos++
			t.emit(t.log[t.pos-1]/16, t.log[t.pos-1]%16, t.pos)
			out = append(out, t)
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

// Reference: §6.5 (rewind-by-preimage), §6.4 — exact counts from the
// enumerator above (its own states, a Go map as the seen set).
//
// By hand at 1 key / 1 value / 1 event / 1 chunk, the source commits x =
// k0 := 1 once, somewhere around the chunk's L (record lo), R (read and roll
// back) and S (splice):
//   - before L: {}; [x] consumed 0, 1, or skipped (s0 = 1)               4
//   - L recorded: [] lo 0, then [x] lo 0; [x] lo 1 consumed 0, 1, s0 = 1   5
//   - rolled back: [] R ⊥@0, then [x]; [x] lo 0: read 1 at 1, undone to ⊥;
//     [x] lo 1: R 1 consumed 0, 1, s0 = 1                                 6
//   - spliced: lo 0: R ⊥@0 before x (x consumed or not), R ⊥@1 (x consumed
//     or not); lo 1: 1@1 spliced over the consumed x (a repeated tag), or
//     after s0 = 1                                                        7
//
// 22 states; 26 steps (2+3+1+1 before L, 2+1+3+1+1 with L, 2+1+1+2+1+1
// rolled back, 1+1+1 spliced); the deepest is 5 steps (L, x, R, S, consume).
func TestRewindCounts(t *testing.T) {
	tests := []struct {
		cfg  protocols.Config
		want rwStats
	}{
		{protocols.Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}, rwStats{22, 26, 5}},
		{protocols.Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1}, rwStats{2539, 3506, 10}},
		{protocols.Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 2, InitialAny: true}, rwStats{1216, 1724, 7}},
	}
	for _, tt := range tests {
		t.Run(tt.cfg.String(), func(t *testing.T) {
			tt.cfg.Mode = RewindPreimage
			if bf := rwEnumerate(tt.cfg); bf != tt.want {
				t.Errorf("enumerator: %+v, want %+v", bf, tt.want)
			}
			r := rwRun(t, newRewind(tt.cfg), 2)
			got := rwStats{int(r.Stats.Distinct), int(r.Stats.Generated), r.Stats.Depth}
			if r.Verdict != explore.Pass || got != tt.want {
				t.Errorf("engine: %v %+v, want pass %+v", r.Verdict, got, tt.want)
			}
		})
	}
}

// Reference: §6.5 (open) — with every before-image the rolled-back refresh
// is valid at lo and every invariant holds; the race the discipline exists
// for is reached; counts do not depend on the number of workers.
func TestRewindPreimagePasses(t *testing.T) {
	cfg := protocols.Config{Keys: 2, Values: 2, Events: 3, Chunks: 2, Txn: 2, Mode: RewindPreimage}
	m := newRewind(cfg)
	r1 := rwRun(t, m, 1)
	if r1.Verdict != explore.Pass {
		t.Fatalf("%v: %v", r1.Verdict, rwSteps(m, r1.Violation))
	}
	r2 := rwRun(t, m, 2)
	if r1.Stats.Distinct != r2.Stats.Distinct || r1.Stats.Generated != r2.Stats.Generated || r1.Stats.Depth != r2.Stats.Depth {
		t.Errorf("1 worker: %+v; 2 workers: %+v", r1.Stats, r2.Stats)
	}
	for _, c := range r1.Coverage {
		if c.Count == 0 {
			t.Errorf("action %s never taken", c.Name)
		}
	}
	for _, name := range []string{"rolled-back-across-own-key", "deleted-row-restored", "copy-decides-frontier"} {
		if !rwReached(r1, name) {
			t.Errorf("%s not reached", name)
		}
	}
}

// Reference: §6.5 (open) — the non-vacuity witness is a real rollback: the
// shortest state reaching it has a read after lo reflecting an event of its
// own key, and the refresh differs from the read.
func TestRewindRollbackReached(t *testing.T) {
	cfg := protocols.Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: RewindPreimage}
	m := newRewind(cfg).(*rewind)
	var s rewindState
	s.Cap = protocols.InitialCaptures(&cfg)[0]
	for _, a := range []rewindAction{{Kind: rewindRecordLow}, {Kind: rewindCommit, Txn: protocols.Txn{N: 1, Ev: [3]model.Event{{Key: 0, Img: 1}}}}, {Kind: rewindRead}} {
		u := s
		if !m.Next(&s, a, &u) {
			t.Fatal("step disabled")
		}
		s = u
	}
	want := "chunk 1: k0 read 1 at r = 1 > lo = 0, rolled back across 1:k0=1/t1 to ⊥"
	if got := m.rolledBackAcrossOwnKey(&s); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := m.checkReconstructs(&s); got != "" {
		t.Errorf("the obligation fails on the correct rollback: %s", got)
	}
}

// Reference: §6.5 (open) — each broken mode is killed. A wrong rollback is a
// transient: frontier-replay and the obligation fail at lo, final-replay
// never does (the undone events replay after the splice).
func TestRewindBrokenModes(t *testing.T) {
	tests := []struct {
		mode    string
		initial model.Store
		inv     string
		steps   []string
		reason  string
	}{
		{RewindMissingPreimage, model.Store{1}, invariants.FrontierReplay.Name, []string{
			"1. chunk 1 records its low edge lo = 0; the consumer may run up to it",
			"2. source commits k0 := ⊥ at position 1",
			"3. chunk 1 reads at r = 1: k0=⊥; rolls back (0, 1] by before-images: 1:k0=⊥/t1 has no before-image, skipped; refresh at lo = 0: k0=⊥",
			"4. splice chunk 1 at lo = 0: emit nothing",
		}, "key k0: replayed ⊥, expected σ_0 = 1"},
		{RewindMissingPreimage, model.Store{1}, RewindReconstructs.Name, []string{
			"1. chunk 1 records its low edge lo = 0; the consumer may run up to it",
			"2. source commits k0 := ⊥ at position 1",
			"3. chunk 1 reads at r = 1: k0=⊥; rolls back (0, 1] by before-images: 1:k0=⊥/t1 has no before-image, skipped; refresh at lo = 0: k0=⊥",
		}, "chunk 1 key k0: read ⊥ at r = 1, rolled back to ⊥, but σ_0(k0) = 1"},
		{RewindWrongSuffix, model.Store{}, invariants.FrontierReplay.Name, []string{
			"1. chunk 1 records its low edge lo = 0; the consumer may run up to it",
			"2. source commits k0 := 1 at position 1",
			"3. chunk 1 reads at r = 1: k0=1; rolls back (1, 1] by before-images: nothing of the chunk's keys; refresh at lo = 0: k0=1",
			"4. splice chunk 1 at lo = 0: emit k0=1@0",
		}, "key k0: replayed 1, expected σ_0 = ⊥"},
	}
	for _, tt := range tests {
		t.Run(tt.mode+"/"+tt.inv, func(t *testing.T) {
			cfg := protocols.Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: tt.mode, Initial: tt.initial}
			m := newRewind(cfg)
			r := rwRun(t, rwOnly[rewindState, rewindAction]{m, []string{tt.inv}}, 2)
			if r.Violation == nil || r.Violation.Property != tt.inv || r.Violation.Reason != tt.reason || !slices.Equal(rwSteps(m, r.Violation), tt.steps) {
				t.Fatalf("got %v\n%s\nwant %s: %s after\n%s", r.Verdict, strings.Join(rwSteps(m, r.Violation), "\n"), tt.inv, tt.reason, strings.Join(tt.steps, "\n"))
			}
		})
	}
	// wrong-suffix breaks the obligation itself as well as the replay.
	wrong := newRewind(protocols.Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: RewindWrongSuffix})
	if r := rwRun(t, rwOnly[rewindState, rewindAction]{wrong, []string{RewindReconstructs.Name}}, 2); r.Violation == nil || r.Violation.Property != RewindReconstructs.Name {
		t.Errorf("wrong-suffix: %s holds (%v)", RewindReconstructs.Name, r.Verdict)
	}
	for _, mode := range []string{RewindMissingPreimage, RewindWrongSuffix} {
		t.Run(mode+"/final-replay holds", func(t *testing.T) {
			cfg := protocols.Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 2, Mode: mode, InitialAny: true}
			m := newRewind(cfg)
			only := rwOnly[rewindState, rewindAction]{m, []string{invariants.FinalReplay.Name}}
			if r := rwRun(t, only, 2); r.Verdict != explore.Pass {
				t.Errorf("final-replay: %v\n%s", r.Verdict, strings.Join(rwSteps(m, r.Violation), "\n"))
			}
			full := rwOnly[rewindState, rewindAction]{m, []string{invariants.FrontierReplay.Name}}
			if r := rwRun(t, full, 2); r.Verdict != explore.Violated {
				t.Errorf("frontier-replay: %v, want violated", r.Verdict)
			}
		})
	}
}

// Reference: §6.5, §6.4 — a splice at lo repeats the tag of the row event at
// lo when the consumer started before it, but as a copied row (the rewound
// preimage is σ_lo), not the log event again: the opt-in delivery claim
// holds (model.Capture.EmitCopy), and so do exact tags.
func TestRewindCopyAtLowIsNoDuplicate(t *testing.T) {
	cfg := protocols.Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: RewindPreimage}
	m := newRewind(cfg)
	r, err := explore.Run(context.Background(), m, explore.Options{Workers: 1, Only: []string{invariants.NoDuplicate.Name, invariants.ExactTags.Name}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != explore.Pass {
		t.Fatalf("got %v\n%s", r.Verdict, strings.Join(rwSteps(m, r.Violation), "\n"))
	}
}

// Reference: §10 (traces are rebuilt from encoded states) — Decode inverts
// Encode on every reachable state of a small run.
func TestRewindEncodeDecode(t *testing.T) {
	cfg := protocols.Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1, Mode: RewindPreimage}
	m := newRewind(cfg)
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
		var d rewindState
		err := m.Decode(b, &d)
		want := s
		want.Cap.Dup, want.Cap.Inexact = 0, 0 // marks of the step, not part of the state
		if err != nil || d != want {
			t.Fatalf("Decode(Encode(s)) = %+v, %v; want %+v", d, err, want)
		}
		for _, a := range m.Actions(&s, nil) {
			if t2 := s; m.Next(&s, a, &t2) {
				queue = append(queue, t2)
			}
		}
	}
}

// Reference: §6.5 (open) — every rewind spec file gives its verdict.
func TestRewindSpecs(t *testing.T) { rwSpecs(t, "rewind") }

// Reference: Thm 1, S-OBS — a pass checks the copy: each model, its copy
// dropped at the close, fails frontier replay (a row only the copy carries).
func TestCopyDroppedKillsOpenModels(t *testing.T) {
	rw := protocols.Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: RewindPreimage, Fault: protocols.CopyDropped}
	m1 := newRewind(rw)
	r1 := rwRun(t, rwOnly[rewindState, rewindAction]{m1, []string{invariants.FrontierReplay.Name}}, 2)
	rr := protocols.Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: RereadFresh, Fault: protocols.CopyDropped}
	m2 := newReread(rr)
	r2 := rwRun(t, rwOnly[rereadState, rereadAction]{m2, []string{invariants.FrontierReplay.Name}}, 2)
	for _, v := range []struct {
		name   string
		reason string
		steps  []string
	}{
		{"rewind", rwReason(r1.Violation), rwSteps(m1, r1.Violation)},
		{"reread", rwReason(r2.Violation), rwSteps(m2, r2.Violation)},
	} {
		if v.reason != "key k0: replayed ⊥, expected σ_1 = 1" || !strings.Contains(strings.Join(v.steps, "\n"), "consumer's start moves past position 1") {
			t.Errorf("%s: %q\n%s", v.name, v.reason, strings.Join(v.steps, "\n"))
		}
	}
}

func rwReason[S, A any](v *explore.Violation[S, A]) string {
	if v == nil {
		return "(no violation)"
	}
	return v.Reason
}
