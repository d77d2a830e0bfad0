package protocols

import (
	"context"
	"math/bits"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

// partsCheck checks p under cfg as a user's main would.
func partsCheck(t *testing.T, p *Protocol, cfg Config) explore.Report {
	t.Helper()
	r, err := p.Check(context.Background(), cfg, explore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// actions is a violation's trace as its step descriptions.
func actions(r explore.Report) []string {
	if r.Violation == nil {
		return nil
	}
	var out []string
	for _, s := range r.Violation.Steps {
		out = append(out, s.Action)
	}
	return out
}

// mustViolate fails unless r is a violation of the named property.
func mustViolate(t *testing.T, r explore.Report, property string) {
	t.Helper()
	if r.Verdict != explore.Violated || r.Violation.Property != property {
		got := r.VerdictName
		if r.Violation != nil {
			got += " of " + r.Violation.Property
		}
		t.Fatalf("verdict %s, want a violation of %s", got, property)
	}
}

// samePart asserts that a variant written with parts is the model a fault
// builds: the same distinct count, the same violated property and the same
// shortest counterexample, step for step.
func samePart(t *testing.T, variant *Protocol, registered string, cfg Config, f Fault, property string) {
	t.Helper()
	reg, err := Lookup(registered)
	if err != nil {
		t.Fatal(err)
	}
	v := partsCheck(t, variant, cfg)
	cfg.Fault = f
	want := partsCheck(t, reg, cfg)
	mustViolate(t, v, property)
	mustViolate(t, want, property)
	if v.Stats.Distinct != want.Stats.Distinct || !slices.Equal(actions(v), actions(want)) {
		t.Errorf("variant: %d distinct, trace\n%s\n%s: %d distinct, trace\n%s", v.Stats.Distinct,
			strings.Join(actions(v), "\n"), f, want.Stats.Distinct, strings.Join(actions(want), "\n"))
	}
}

// Reference: §7.2, Fig. 1; Def. 6.2; §2.3 half-open windows.
func TestClassicParts(t *testing.T) {
	cfg := Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1}
	t.Run("narrowed window is low-edge-off-by-one", func(t *testing.T) {
		p := Classic(ClassicParts{Window: func(u model.Unit) model.Window {
			w := u.Window()
			w.Lo++
			return w
		}})
		p.Name = "classic-narrow"
		samePart(t, p, "classic", cfg, LowEdgeOffByOne, "closed-unit-cut")
	})
	t.Run("release at the high write is early-release", func(t *testing.T) {
		p := Classic(ClassicParts{ReleaseAtHighWrite: true})
		samePart(t, p, "classic", cfg, EarlyRelease, "closed-unit-cut")
	})
	// Without the pause a window event can pass before the select's rows
	// reach the buffer, and the deleted row comes back at the close (the race
	// Fig. 1's pause rules out): insert k0, low watermark, read k0=1, delete
	// k0, the consumer takes the insert, the low marker and the delete, the
	// select returns, the high marker releases k0=1 — 9 steps.
	t.Run("consume during the select", func(t *testing.T) {
		r := partsCheck(t, Classic(ClassicParts{ConsumeDuringRead: true}), Config{Keys: 1, Values: 2, Events: 2, Chunks: 1, Txn: 1})
		mustViolate(t, r, "final-replay")
		tr := actions(r)
		if len(tr) != 10 || !strings.Contains(tr[6], "before its select has returned") || !strings.Contains(tr[9], "emit survivors k0=1@4") {
			t.Errorf("want the 9-step race, got\n%s", strings.Join(tr, "\n"))
		}
	})
}

// Reference: §7.4, Theorem 7, Proposition 4 (A-read, A-discard).
func TestReadonlyParts(t *testing.T) {
	cfg := Config{Keys: 2, Values: 2, Events: 3, Chunks: 1, Txn: 2}
	t.Run("consume during the read is consumer-runs-during-read", func(t *testing.T) {
		samePart(t, Readonly(ReadonlyParts{ConsumeDuringRead: true}), "readonly", cfg, ConsumerRunsDuringRead, "final-replay")
	})
	t.Run("a sample inside a transaction is interior-executed-set", func(t *testing.T) {
		p := Readonly(ReadonlyParts{Sample: func(l model.Log) model.Coord {
			if c := l.Len(); c >= 2 && l.Ev[c-1].Txn == l.Ev[c-2].Txn {
				return c - 1
			}
			return l.Len()
		}})
		samePart(t, p, "readonly", cfg, InteriorExecutedSet, "executed-set-membership")
	})
	// MariaDB's GTID_BINLOG_POS is one frontier per replication domain
	// (§7.4, MariaDB bridge): with one domain, "the label lies above the low
	// frontier and at or below the high one" decides the same window as the
	// set test of Theorem 7, so the variant explores the same states.
	t.Run("membership by frontier", func(t *testing.T) {
		frontier := func(s model.TxnSet) int { return bits.Len64(uint64(s)) - 1 } // the highest label; -1 when empty
		p := Readonly(ReadonlyParts{Member: func(t uint8, low, high model.TxnSet) bool {
			return int(t) > frontier(low) && int(t) <= frontier(high)
		}})
		reg, _ := Lookup("readonly")
		got, want := partsCheck(t, p, cfg), partsCheck(t, reg, cfg)
		if got.Verdict != explore.Pass || got.Stats.Distinct != want.Stats.Distinct {
			t.Errorf("frontier membership: %s, %d distinct; the set test: %d", got.VerdictName, got.Stats.Distinct, want.Stats.Distinct)
		}
	})
	// A read that may reflect any committed state, before the low sample
	// too, breaks A-read (O2: a coordinate inside the bracket). The stale
	// row survives the window, so the sink is wrong from the high edge on:
	// the trajectory fails in the same state as the contract, and comes
	// first in the list.
	t.Run("reads before the bracket", func(t *testing.T) {
		p := Readonly(ReadonlyParts{Read: func(l model.Log, lo, c model.Coord) bool { return PublishedRead(&l, 0, c) }})
		r := partsCheck(t, p, cfg)
		mustViolate(t, r, "latest-high-trajectory")
		if st := r.Violation.Steps; !strings.Contains(st[len(st)-1].Action, "release") {
			t.Errorf("the violation is not the release of a stale read:\n%s", strings.Join(actions(r), "\n"))
		}
	})
}

// Reference: §7.6–7.7, Proposition 6, Theorem 8, Lemma 4.2.
func TestDumpParts(t *testing.T) {
	trusted := Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 1, Mode: DumpTrusted}
	uncertain := trusted
	uncertain.Mode = DumpUncertain
	t.Run("r recorded after the view is false-recovery-point", func(t *testing.T) {
		samePart(t, Dump(DumpParts{RecordRAfterView: true}), "dump", trusted, FalseRecoveryPoint, "contract")
	})
	t.Run("consume during the read is consumer-runs-during-read", func(t *testing.T) {
		samePart(t, Dump(DumpParts{ConsumeDuringRead: true}), "dump", uncertain, ConsumerRunsDuringRead, "final-replay")
	})
	// Claiming the trajectory from b, the backup's start, claims what only a
	// known view could give (Thm 8: the view is somewhere in (b, e]). In
	// mode trusted b is r: the same claim is the published one.
	t.Run("claim from b", func(t *testing.T) {
		p := Dump(DumpParts{Claim: func(u model.Unit) model.Coord { return u.Lo }})
		mustViolate(t, partsCheck(t, p, uncertain), "latest-high-trajectory")
		if r := partsCheck(t, p, trusted); r.Verdict != explore.Pass {
			t.Errorf("trusted, claim from b = r: %s", r.VerdictName)
		}
	})
}

// Reference: §4.6, Corollary 3, Proposition 2, Example 5.1.
func TestCompositeParts(t *testing.T) {
	cfg := Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeTablesync}
	// Claiming from the earliest splice is one early onset; Proposition 2's
	// per-table splices at distinct coordinates refute it.
	t.Run("claim from the earliest splice", func(t *testing.T) {
		p := Composite(CompositeParts{Onset: func(c model.Capture, at model.Coord) bool { return at == EarliestLow(&c.Plan) }})
		mustViolate(t, partsCheck(t, p, cfg), "latest-high-trajectory")
	})
}

// The dump's and the composition's faults are made on top of a variant's
// own part too (see TestParallelFaultsKeepVariantParts): the variant's part
// is still called, and the fault is still caught.
func TestFaultsKeepVariantParts(t *testing.T) {
	var claims, onsets atomic.Int64
	dumpCfg := Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 1, Mode: DumpUncertain, Fault: ClaimInsideUncertainty}
	published := partsCheck(t, Dump(DumpParts{}), dumpCfg)
	own := partsCheck(t, Dump(DumpParts{Claim: func(u model.Unit) model.Coord { claims.Add(1); return u.Hi }}), dumpCfg)
	if claims.Load() == 0 || own.Verdict != explore.Violated || published.Verdict != explore.Violated ||
		own.Violation.Property != published.Violation.Property || own.Stats.Distinct != published.Stats.Distinct ||
		len(own.Violation.Steps) != len(published.Violation.Steps) {
		t.Errorf("dump: the variant's claim was called %d times; variant %v, published %v", claims.Load(), own.Verdict, published.Verdict)
	}
	compCfg := Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeTablesync, Fault: EarlyCommonOnset}
	onset := func(c model.Capture, at model.Coord) bool { onsets.Add(1); return at == c.Plan.LatestHigh() }
	if r := partsCheck(t, Composite(CompositeParts{Onset: onset}), compCfg); onsets.Load() == 0 || r.Verdict != explore.Violated || r.Violation.Property != "latest-high-trajectory" {
		t.Errorf("composite: the variant's onset was called %d times; verdict %v", onsets.Load(), r.Verdict)
	}
}

// ChunkKeys cuts the scope into contiguous ranges that partition it, sizes
// differing by at most one, in key order, at every bound the protocols take.
func TestChunkKeys(t *testing.T) {
	for keys := 1; keys <= model.MaxKeys; keys++ {
		for chunks := 1; chunks <= min(keys, model.MaxUnits); chunks++ {
			var all model.KeySet
			small, large := keys, 0
			next := model.Key(0)
			for i := range chunks {
				d := ChunkKeys(i, keys, chunks)
				if d == 0 || d&all != 0 || d != model.Range(next, next+model.Key(bits.OnesCount16(uint16(d)))) {
					t.Fatalf("%d keys, %d chunks: chunk %d is %v after %v", keys, chunks, i, d, all)
				}
				n := bits.OnesCount16(uint16(d))
				small, large = min(small, n), max(large, n)
				all |= d
				next += model.Key(n)
			}
			if all != model.Range(0, model.Key(keys)) || large-small > 1 {
				t.Errorf("%d keys, %d chunks: cover %v, sizes %d..%d", keys, chunks, all, small, large)
			}
		}
	}
}
