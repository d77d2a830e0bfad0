package model

import (
	"fmt"
	"strings"
)

// SinkRule is how the sink applies an emitted entry: the merge rule at the
// sink. The paper's replay is the last-writer-wins fold from the empty store
// (§3.4, Def. 6.1); Corollary 4 leaves how a real sink applies the stream
// outside the theorem (§6), so a connector's own rule is checked here
// against the same claims. The stream-level claims — per-key monotonicity
// (Thm 3, Thm 5), no duplicate delivery and exact tags — judge the emitted
// stream (Capture.Out) whatever the rule; the replay and cut claims judge
// what the sink holds (Capture.Held).
type SinkRule struct {
	// Name is the rule's name in flags, spec files and search identities.
	Name string
	// Take reports whether the sink applies e, holding val, the value of
	// the entry it took last for e.Key (Absent: no row), tagged tag (0:
	// none yet); copied marks a copied row (Capture.EmitCopy), as against
	// a log event or an entry that carries one (Capture.Emit).
	Take func(val Value, tag Coord, e Entry, copied bool) bool
	// ValueBlind declares that Take compares values only with Absent, so
	// value renaming (--symmetry) still applies; every shipped rule is.
	ValueBlind bool
}

func (r *SinkRule) String() string {
	if r == nil {
		return LastWriterWins.Name
	}
	return r.Name
}

// IsLastWriterWins reports whether r is the paper's replay: nil or
// LastWriterWins. Under it the sink is the replay of the stream, and a
// capture holds no second copy of it.
func (r *SinkRule) IsLastWriterWins() bool { return r == nil || r == LastWriterWins }

// The shipped rules.
var (
	// LastWriterWins applies every entry: the replay of Def. 6.1, the
	// default.
	LastWriterWins = &SinkRule{Name: "last-writer-wins", ValueBlind: true,
		Take: func(Value, Coord, Entry, bool) bool { return true }}
	// VersionMax applies an entry only if its tag is at least the tag of
	// the entry the sink holds for its key (§6.5 version-max, with the tag
	// as the version): the sink never steps back, whatever order the
	// stream has.
	VersionMax = &SinkRule{Name: "version-max", ValueBlind: true,
		Take: func(_ Value, tag Coord, e Entry, _ bool) bool { return e.Tag >= tag }}
	// InsertIgnore applies a copied row only when the sink holds no row for
	// its key (INSERT … ON CONFLICT DO NOTHING), so a copy never overwrites
	// a streamed row; log events apply as usual.
	InsertIgnore = &SinkRule{Name: "insert-ignore", ValueBlind: true,
		Take: func(v Value, _ Coord, _ Entry, copied bool) bool { return !copied || v == Absent }}
	// UpsertOnly never applies a delete (value Absent): a sink that cannot
	// delete, as an upsert-only table or a soft-delete-less index.
	UpsertOnly = &SinkRule{Name: "upsert-only", ValueBlind: true,
		Take: func(_ Value, _ Coord, e Entry, _ bool) bool { return e.Val != Absent }}
)

// SinkRules lists the shipped rules, the default first.
var SinkRules = []*SinkRule{LastWriterWins, VersionMax, InsertIgnore, UpsertOnly}

// LookupSink finds a shipped rule by name ("" is the default); the error
// lists the valid names.
func LookupSink(name string) (*SinkRule, error) {
	if name == "" {
		return LastWriterWins, nil
	}
	var names []string
	for _, r := range SinkRules {
		if r.Name == name {
			return r, nil
		}
		names = append(names, r.Name)
	}
	return nil, fmt.Errorf("unknown sink rule %q (known: %s)", name, strings.Join(names, ", "))
}
