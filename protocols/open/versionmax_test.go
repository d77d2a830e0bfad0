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

func vmModel(cfg protocols.Config) *versionmax {
	return &versionmax{cfg, VersionmaxParts{}.withMode(cfg.Mode)}
}

// Reference: §6.5 version-max — with engine versions in commit order and
// versioned tombstones every invariant and the obligation hold, and the
// max rule meets every out-of-order arrival: a copied row after a newer
// event, after a newer delete, and an event after a newer copied row.
func TestVersionmaxEnginePasses(t *testing.T) {
	for _, cfg := range []protocols.Config{
		{Keys: 1, Values: 2, Events: 3, Chunks: 1, Txn: 1, Mode: VersionmaxEngine, InitialAny: true},
		{Keys: 2, Values: 1, Events: 3, Chunks: 2, Txn: 2, Mode: VersionmaxEngine},
	} {
		t.Run(cfg.String(), func(t *testing.T) {
			m := vmModel(cfg)
			r := kvRun(t, m)
			kvPass(t, m, r)
			for _, name := range []string{"stale-copy-rejected", "tombstone-rejects-stale-copy", "stale-event-rejected"} {
				if !kvReached(r.Sometimes, name) {
					t.Errorf("%s not reached", name)
				}
			}
		})
	}
}

// Reference: §6.5 — "client-supplied timestamps in general do not" satisfy
// the obligation. The shortest case: two writes to k0 whose timestamps do
// not increase with commit order; the sink keeps the first, the source holds
// the second.
func TestVersionmaxClientKeepsOverwrittenValue(t *testing.T) {
	m := vmModel(protocols.Config{Keys: 1, Values: 1, Events: 2, Chunks: 1, Txn: 1, Mode: VersionmaxClient})
	v := kvFail(t, m, kvRun(t, m, invariants.FinalReplay.Name), invariants.FinalReplay.Name)
	if len(v.Trace)-1 != 5 {
		t.Errorf("%d steps, want 5", len(v.Trace)-1)
	}
	last := v.Trace[len(v.Trace)-1].State
	l := &last.Cap.Log
	if l.N != 2 || l.Ev[0].Key != 0 || l.Ev[1].Key != 0 || last.Ver[1] > last.Ver[0] {
		t.Fatalf("log %v versions %v: want two writes to k0, the second's version not above the first's", l.Ev[:l.N], last.Ver[:l.N])
	}
	if last.Cap.Out.Val[0] != l.Ev[0].Img || l.Sigma(2, 0) != l.Ev[1].Img {
		t.Errorf("sink k0 = %v, source %v: want the first write kept over the second", last.Cap.Out.Val[0], l.Sigma(2, 0))
	}
	ss := kvSteps(m, v)
	if !strings.HasPrefix(ss[len(ss)-1], "consume k0 := ") || !strings.Contains(ss[len(ss)-1], "at position 2: rejected") {
		t.Errorf("last step %q: want the second write rejected", ss[len(ss)-1])
	}
	// The obligation fails as soon as the second write is committed.
	v = kvFail(t, m, kvRun(t, m, VersionmaxOrder.Name), VersionmaxOrder.Name)
	if len(v.Trace)-1 != 2 || !strings.HasPrefix(v.Reason, "key k0: the event at 2 has version") {
		t.Errorf("version-order: %d steps, %q", len(v.Trace)-1, v.Reason)
	}
}

// Reference: §6.5 — "deletes would also need a versioned tombstone or
// equivalent evidence to reject stale copied rows". Without one, a row read
// before its delete reaches the sink after the delete and is accepted: the
// deleted row is resurrected, although the versions agree with commit order.
func TestVersionmaxNoTombstoneResurrects(t *testing.T) {
	m := vmModel(protocols.Config{Keys: 1, Values: 1, Events: 2, Chunks: 1, Txn: 1, Mode: VersionmaxNoTombstone})
	v := kvFail(t, m, kvRun(t, m, invariants.FinalReplay.Name), invariants.FinalReplay.Name)
	want := []string{
		"source commits k0 := 1 at position 1, version 2",
		"read k0 = 1 (v2) at coordinate 1; the present rows are in flight to the sink",
		"source commits k0 := ⊥ at position 2, version 3",
		"consume k0 := 1 (v2) at position 1: accepted over nothing",
		"consume k0 := ⊥ (v3) at position 2: row removed, no tombstone (was k0=1 (v2))",
		"copied k0 = 1 (v2, read at 1) reaches the sink: accepted over nothing",
	}
	if got := kvSteps(m, v); !slices.Equal(got, want) {
		t.Errorf("trace\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	last := v.Trace[len(v.Trace)-1].State
	if last.Cap.Out.Val[0] != 1 || last.Cap.Log.Sigma(2, 0) != model.Absent {
		t.Errorf("sink k0 = %v, source %v: want the resurrected 1 against ⊥", last.Cap.Out.Val[0], last.Cap.Log.Sigma(2, 0))
	}
	// The version half of the obligation holds: the tombstone is the other half.
	if r := kvRun(t, m, VersionmaxOrder.Name); r.Verdict != explore.Pass {
		t.Errorf("version-order: %v", r.Verdict)
	}
	// With tombstones the same history is repaired: the stale row is rejected.
	e := vmModel(protocols.Config{Keys: 1, Values: 1, Events: 2, Chunks: 1, Txn: 1, Mode: VersionmaxEngine})
	if r := kvRun(t, e); r.Verdict != explore.Pass || !kvReached(r.Sometimes, "tombstone-rejects-stale-copy") {
		t.Errorf("engine: %v, tombstone race reached: %v", r.Verdict, kvReached(r.Sometimes, "tombstone-rejects-stale-copy"))
	}
}

// Reference: §6.5 — each broken mode's full verdict: the first invariant
// its shortest counterexample breaks. VersionmaxClient breaks the obligation at once;
// no-tombstone's resurrection, in the same step as the final failure, takes the sink's tag back (the stale row
// reflects position 1 after the delete at 2), a transient regression.
func TestVersionmaxModeVerdicts(t *testing.T) {
	for _, tt := range []struct {
		mode, first string
		steps       int
	}{
		{VersionmaxClient, VersionmaxOrder.Name, 2},
		{VersionmaxNoTombstone, invariants.FinalReplay.Name, 6},
	} {
		m := vmModel(protocols.Config{Keys: 1, Values: 1, Events: 2, Chunks: 1, Txn: 1, Mode: tt.mode})
		if v := kvFail(t, m, kvRun(t, m), tt.first); len(v.Trace)-1 != tt.steps {
			t.Errorf("%s: %d steps, want %d", tt.mode, len(v.Trace)-1, tt.steps)
		}
	}
	m := vmModel(protocols.Config{Keys: 1, Values: 1, Events: 2, Chunks: 1, Txn: 1, Mode: VersionmaxNoTombstone})
	if v := kvFail(t, m, kvRun(t, m, invariants.Monotonic.Name), invariants.Monotonic.Name); len(v.Trace)-1 != 6 {
		t.Errorf("no-tombstone per-key-monotonicity: %d steps, want 6", len(v.Trace)-1)
	}
}

// The state codec is exact: the queue holds states as bytes.
func TestVersionmaxEncodeDecode(t *testing.T) {
	for _, mode := range []string{VersionmaxClient, VersionmaxNoTombstone} {
		kvRoundTrip(t, vmModel(protocols.Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 2, Mode: mode, InitialAny: true}))
	}
}

// Reference: §6.5 — the spec files of the broken modes give their verdicts.
func TestVersionmaxSpecs(t *testing.T) { kvSpecs(t, "versionmax", 2) }

// Reference: §6.5 — exact counts from an independent enumerator
// (vmEnumerate).
//
// By hand at K=1 V=1 E=1 C=1 (engine): x = k0 := 1 (v2), one read R.
// S0 {}; commit → S1 [x]; R → S2 (reads ⊥ at 0, closes). S1: R → S3 (1@1 in
// flight), consume → S4 (sink 1, v2), start-later → S5 (s0 = 1). S2 commits
// into S6. S3: deliver → S7, consume → S8, start-later → S9 (s0 = 1, in
// flight). S4 R → S8 again; S5 R → S9 again. S6 consume → S12. S7 consume →
// S13 (x rejected: the copy holds v2), start-later → S14; S8 deliver → S15
// (the copy rejected); S9 deliver → S14. 14 distinct, 16 generated
// (2+3+1+3+1+1+1+2+1+1), depth 4 (S0 S1 S3 S7 S13).
func TestVersionmaxCounts(t *testing.T) {
	for _, tt := range []struct {
		cfg                        protocols.Config
		distinct, generated, depth int
		holds                      string // an invariant that holds in the mode, checked while counting
	}{
		{protocols.Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: VersionmaxEngine}, 14, 16, 4, invariants.FinalReplay.Name},
		{protocols.Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 2, Mode: VersionmaxEngine, InitialAny: true}, 2466, 4081, 8, invariants.FinalReplay.Name},
		{protocols.Config{Keys: 1, Values: 2, Events: 2, Chunks: 1, Txn: 1, Mode: VersionmaxClient}, 630, 899, 6, invariants.NoDuplicate.Name},
		{protocols.Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 1, Mode: VersionmaxNoTombstone}, 212, 311, 7, VersionmaxOrder.Name},
	} {
		t.Run(tt.cfg.String(), func(t *testing.T) {
			bf := vmEnumerate(tt.cfg)
			if bf.distinct != tt.distinct || bf.generated != tt.generated || bf.depth != tt.depth {
				t.Errorf("enumerator: %+v, want %d distinct, %d generated, depth %d", bf, tt.distinct, tt.generated, tt.depth)
			}
			r, err := explore.Run(context.Background(), vmModel(tt.cfg), explore.Options{Workers: 2, Only: []string{tt.holds}})
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

// vmBF is a version-max state in the enumerator's own terms.
type vmBF struct {
	base              []int
	log               []kvRow
	pos, s0           int
	reads             []vmBFRead // ranges read so far, in key order
	flight            []bool     // a copied row on its way to the sink
	out, tag, ver     []int      // the sink: value, tag and version per key (version 0: nothing held)
	dup               []bool
	delivered         []bool // the log event at the key's tag has reached the sink (model.Capture.Delivered)
	readAt            []int
	rejected          string // what the last step's entry met at the sink
	engine, tombstone bool
}

type vmBFRead struct {
	at   int
	vals []int
}

func (s vmBF) key() string {
	return fmt.Sprint(s.base, s.log, s.pos, s.s0, s.reads, s.flight, s.out, s.tag, s.ver, s.delivered, s.readAt, s.rejected)
}

func (s vmBF) clone() vmBF {
	t := s
	t.reads, t.flight = slices.Clone(s.reads), slices.Clone(s.flight)
	t.out, t.tag, t.ver, t.dup, t.readAt = slices.Clone(s.out), slices.Clone(s.tag), slices.Clone(s.ver), slices.Clone(s.dup), slices.Clone(s.readAt)
	t.delivered = slices.Clone(s.delivered)
	t.rejected = ""
	return t
}

// rowVer is the version of k's row after the first n rows: its last
// write's, or 1 for a base row.
func (s vmBF) rowVer(n, k int) int {
	v := 1
	for _, e := range s.log[:n] {
		if e.key == k {
			v = e.ver
		}
	}
	return v
}

// offer hands the sink an entry: kept if its version is the larger one; a
// delete without tombstones clears the key outright.
func (s *vmBF) offer(k, val, tag, ver int, copied bool) {
	switch {
	case !copied && val == 0 && !s.tombstone:
		s.deliver(k, tag, copied)
		s.out[k], s.tag[k], s.ver[k] = 0, tag, 0
	case ver <= s.ver[k] && !copied:
		s.rejected = "event"
	case ver <= s.ver[k] && s.out[k] == 0:
		s.rejected = "copy by tombstone"
	case ver <= s.ver[k]:
		s.rejected = "copy"
	default:
		s.deliver(k, tag, copied)
		s.out[k], s.tag[k], s.ver[k] = val, tag, ver
	}
}

// deliver notes an entry reaching the sink: a log event at the position
// whose event the key has already received is a second delivery; a copy at
// another tag leaves no event delivered at the key's tag.
func (s *vmBF) deliver(k, tag int, copied bool) {
	if !copied {
		s.dup[k] = s.dup[k] || tag != 0 && tag == s.tag[k] && s.delivered[k]
		s.delivered[k] = true
	} else if tag != s.tag[k] {
		s.delivered[k] = false
	}
}

// vmEnumerate enumerates version-max from §6.5's words: the source commits
// with a version (the commit's sequence number + 1, or under client any of
// 2..E+1); the ranges are read in order at the end of the log, each present
// row then in flight; rows arrive and the consumer applies the log, in any
// interleaving, the sink keeping the larger version; the consumer's start
// may move on while it lies before every read.
func vmEnumerate(cfg protocols.Config) kvCount {
	K, C := cfg.Keys, cfg.Chunks
	var inits []vmBF
	for _, b := range kvStores(K, cfg.Values, cfg.InitialAny) {
		inits = append(inits, vmBF{base: b, flight: make([]bool, K), out: make([]int, K), tag: make([]int, K), ver: make([]int, K),
			dup: make([]bool, K), delivered: make([]bool, K), readAt: make([]int, K), tombstone: cfg.Mode != VersionmaxNoTombstone})
	}
	return kvSearch(inits, vmBF.key, func(s vmBF) []vmBF {
		var out []vmBF
		for _, rows := range kvTxns(s.base, s.log, cfg.Values, min(cfg.Txn, cfg.Events-len(s.log))) {
			label := 1
			if len(s.log) > 0 {
				label = s.log[len(s.log)-1].txn + 1
			}
			vers := []int{label + 1}
			if cfg.Mode == VersionmaxClient {
				vers = nil
				for v := 2; v <= cfg.Events+1; v++ {
					vers = append(vers, v)
				}
			}
			for _, v := range vers {
				t := s.clone()
				t.log = kvCommit(t.log, rows, v)
				out = append(out, t)
			}
		}
		if i := len(s.reads); i < C {
			t := s.clone()
			r := vmBFRead{at: len(t.log)}
			for k := i * K / C; k < (i+1)*K/C; k++ {
				v := kvSigma(t.base, t.log, r.at, k)
				r.vals = append(r.vals, v)
				t.readAt[k] = r.at
				t.flight[k] = v != 0
			}
			t.reads = append(t.reads, r)
			out = append(out, t)
		}
		for k := 0; k < K; k++ {
			if s.flight[k] {
				t := s.clone()
				t.flight[k] = false
				t.offer(k, kvSigma(t.base, t.log, t.readAt[k], k), t.readAt[k], t.rowVer(t.readAt[k], k), true)
				out = append(out, t)
			}
		}
		if s.pos < len(s.log) {
			t := s.clone()
			e := t.log[t.pos]
			t.pos++
			t.offer(e.key, e.val, t.pos, e.ver, false)
			out = append(out, t)
			if s.pos == s.s0 && !slices.ContainsFunc(s.reads, func(r vmBFRead) bool { return r.at <= s.pos }) {
				t := s.clone()
				t.pos++
				t.s0++
				out = append(out, t)
			}
		}
		return out
	})
}
