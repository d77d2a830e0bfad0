package open

import (
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
)

// A mode of key-range gating is a choice of its parts: the frozen snapshot
// written as a ReadAt, and the nonmonotone order as a MayCopy, explore the
// modes' very state spaces, with the same verdicts; a replaced part is named
// in the trace as the variant's.
func TestKeyrangeModesAreParts(t *testing.T) {
	cfg := protocols.Config{Keys: 2, Values: 1, Events: 1, Chunks: 2, Txn: 1, Mode: KeyrangeAdvancing}
	frozenRead := func(c *model.Capture) model.Coord {
		if c.Plan.N > 0 {
			return c.Plan.Units[0].Lo
		}
		return c.Pos
	}
	anyOrder := func(*model.Capture, int, func(int) bool) bool { return true }
	for _, tt := range []struct {
		mode  string
		parts KeyrangeParts
	}{
		{KeyrangeFrozen, KeyrangeParts{ReadAt: frozenRead}},
		{KeyrangeNonmonotone, KeyrangeParts{MayCopy: anyOrder}},
	} {
		byMode := cfg
		byMode.Mode = tt.mode
		want, err := Keyrange(KeyrangeParts{}).Check(t.Context(), byMode, explore.Options{Workers: 1, Continue: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Keyrange(tt.parts).Check(t.Context(), cfg, explore.Options{Workers: 1, Continue: true})
		if err != nil {
			t.Fatal(err)
		}
		if got.Stats.Distinct != want.Stats.Distinct || got.Stats.Generated != want.Stats.Generated || len(got.Violations) != len(want.Violations) || len(want.Violations) == 0 {
			t.Errorf("%s as parts: %d/%d states, %d violated; the mode: %d/%d, %d", tt.mode,
				got.Stats.Distinct, got.Stats.Generated, len(got.Violations), want.Stats.Distinct, want.Stats.Generated, len(want.Violations))
		}
	}
	rep, err := Keyrange(KeyrangeParts{ReadAt: frozenRead}).Check(t.Context(), cfg, explore.Options{Workers: 1, Only: []string{invariants.FinalReplay.Name}})
	if err != nil || rep.Violation == nil {
		t.Fatalf("frozen ReadAt: %v %v", rep.Verdict, err)
	}
	text := rep.Violation.Text(false)
	if !strings.Contains(text, "the variant's ReadAt") {
		t.Errorf("the trace does not name the replaced part:\n%s", text)
	}
}

// Version-max's modes are choices of its parts: the client's timestamps as
// Versions and no-tombstone as DeleteForgets explore the modes' state
// spaces, with the same verdicts.
func TestVersionmaxModesAreParts(t *testing.T) {
	cfg := protocols.Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 1, Mode: VersionmaxEngine}
	client := func(_ model.Log, events int) []uint8 {
		var vs []uint8
		for v := 2; v <= events+1; v++ {
			vs = append(vs, uint8(v))
		}
		return vs
	}
	for _, tt := range []struct {
		mode  string
		parts VersionmaxParts
	}{
		{VersionmaxClient, VersionmaxParts{Versions: client}},
		{VersionmaxNoTombstone, VersionmaxParts{DeleteForgets: true}},
	} {
		byMode := cfg
		byMode.Mode = tt.mode
		want, err := Versionmax(VersionmaxParts{}).Check(t.Context(), byMode, explore.Options{Workers: 1, Continue: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Versionmax(tt.parts).Check(t.Context(), cfg, explore.Options{Workers: 1, Continue: true})
		if err != nil {
			t.Fatal(err)
		}
		if got.Stats.Distinct != want.Stats.Distinct || got.Stats.Generated != want.Stats.Generated || len(got.Violations) != len(want.Violations) || len(want.Violations) == 0 {
			t.Errorf("%s as parts: %d/%d states, %d violated; the mode: %d/%d, %d", tt.mode,
				got.Stats.Distinct, got.Stats.Generated, len(got.Violations), want.Stats.Distinct, want.Stats.Generated, len(want.Violations))
		}
	}
}

// Rewind's modes are choices of its parts: wrong-suffix as Suffix and
// missing-preimage as DeleteWithoutPreimage explore the modes' state
// spaces, with the same verdicts.
func TestRewindModesAreParts(t *testing.T) {
	cfg := protocols.Config{Keys: 2, Values: 1, Events: 2, Chunks: 1, Txn: 1, Mode: RewindPreimage}
	for _, tt := range []struct {
		mode  string
		parts RewindParts
	}{
		{RewindWrongSuffix, RewindParts{Suffix: func(lo, r model.Coord) model.Window { return model.Window{Lo: min(lo+1, r), Hi: r} }}},
		{RewindMissingPreimage, RewindParts{DeleteWithoutPreimage: true}},
	} {
		byMode := cfg
		byMode.Mode = tt.mode
		want, err := Rewind(RewindParts{}).Check(t.Context(), byMode, explore.Options{Workers: 1, Continue: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Rewind(tt.parts).Check(t.Context(), cfg, explore.Options{Workers: 1, Continue: true})
		if err != nil {
			t.Fatal(err)
		}
		if got.Stats.Distinct != want.Stats.Distinct || got.Stats.Generated != want.Stats.Generated || len(got.Violations) != len(want.Violations) || len(want.Violations) == 0 {
			t.Errorf("%s as parts: %d/%d states, %d violated; the mode: %d/%d, %d", tt.mode,
				got.Stats.Distinct, got.Stats.Generated, len(got.Violations), want.Stats.Distinct, want.Stats.Generated, len(want.Violations))
		}
	}
}

// Re-read's modes are choices of its parts: stale-bracket as KeepBracket and
// apply-deltas as ApplyUnknownDeltas explore the modes' state spaces, with
// the same verdicts.
func TestRereadModesAreParts(t *testing.T) {
	cfg := protocols.Config{Keys: 2, Values: 4, Events: 2, Chunks: 2, Txn: 1, Mode: RereadFresh, InitialAny: true}
	for _, tt := range []struct {
		mode  string
		parts RereadParts
	}{
		{RereadStaleBracket, RereadParts{KeepBracket: true}},
		{RereadApplyDeltas, RereadParts{ApplyUnknownDeltas: true}},
	} {
		byMode := cfg
		byMode.Mode = tt.mode
		want, err := Reread(RereadParts{}).Check(t.Context(), byMode, explore.Options{Workers: 1, Continue: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Reread(tt.parts).Check(t.Context(), cfg, explore.Options{Workers: 1, Continue: true})
		if err != nil {
			t.Fatal(err)
		}
		if got.Stats.Distinct != want.Stats.Distinct || got.Stats.Generated != want.Stats.Generated || len(got.Violations) != len(want.Violations) || len(want.Violations) == 0 {
			t.Errorf("%s as parts: %d/%d states, %d violated; the mode: %d/%d, %d", tt.mode,
				got.Stats.Distinct, got.Stats.Generated, len(got.Violations), want.Stats.Distinct, want.Stats.Generated, len(want.Violations))
		}
	}
}
