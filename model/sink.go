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
//
// A capture names its rule by number (Capture.Rule), so a state stays a
// fixed-size value: a rule of one's own is made by NewSinkRule, which
// numbers it, before any search uses it (at init, as protocols.Register).
type SinkRule struct {
	// Name is the rule's name in flags, spec files and search identities.
	Name string
	// Take reports whether the sink applies e, holding val, the value of
	// the entry it took last for e.Key (Absent: no row), tagged tag (the
	// position before the log's first, Log.Offset(0): none yet); copied
	// marks a copied row (Capture.EmitCopy), as against a log event or an
	// entry that carries one (Capture.Emit). Tags are positions as the log
	// names them (Log.Shift): a run whose positions start past 9 or 255
	// tells a rule that compares them as text or keeps a byte of them.
	Take func(val Value, tag Offset, e Offered, copied bool) bool
	// ValueBlind declares that Take compares values only with Absent, so
	// value renaming (--symmetry) still applies; every shipped rule is.
	ValueBlind bool
	id         uint8 // its number: its index in rules
}

// Offered is an entry as it reaches the sink: its tag is the position as
// the log names it (Log.Offset).
type Offered struct {
	Key Key
	Val Value
	Tag Offset
}

// rules are the rules made so far, by number; 0 is last-writer-wins.
var rules = []*SinkRule{LastWriterWins}

// NewSinkRule makes a rule and numbers it (at most 255 rules in all).
func NewSinkRule(name string, valueBlind bool, take func(val Value, tag Offset, e Offered, copied bool) bool) *SinkRule {
	if len(rules) > 255 {
		panic("model.NewSinkRule: more than 255 sink rules")
	}
	r := &SinkRule{Name: name, Take: take, ValueBlind: valueBlind, id: uint8(len(rules))}
	rules = append(rules, r)
	return r
}

// ID is the rule's number, what Capture.Rule holds; 0 for last-writer-wins
// (and nil). A rule not made by NewSinkRule has none: ok is false.
func (r *SinkRule) ID() (id uint8, ok bool) {
	if r.IsLastWriterWins() {
		return 0, true
	}
	return r.id, r.id != 0 && rules[r.id] == r
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
		Take: func(Value, Offset, Offered, bool) bool { return true }}
	// VersionMax applies an entry only if its tag is at least the tag of
	// the entry the sink holds for its key (§6.5 version-max, with the tag
	// as the version): the sink never steps back, whatever order the
	// stream has.
	VersionMax = NewSinkRule("version-max", true,
		func(_ Value, tag Offset, e Offered, _ bool) bool { return e.Tag >= tag })
	// InsertIgnore applies a copied row only when the sink holds no row for
	// its key (INSERT … ON CONFLICT DO NOTHING), so a copy never overwrites
	// a streamed row; log events apply as usual.
	InsertIgnore = NewSinkRule("insert-ignore", true,
		func(v Value, _ Offset, _ Offered, copied bool) bool { return !copied || v == Absent })
	// UpsertOnly never applies a delete (value Absent): a sink that cannot
	// delete, as an upsert-only table or a soft-delete-less index.
	UpsertOnly = NewSinkRule("upsert-only", true,
		func(_ Value, _ Offset, e Offered, _ bool) bool { return e.Val != Absent })
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
