package invariants

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

// ExactEmission is the model's form of certify's S4 prefix check: the stream
// is exactly what the discipline emits, not only a stream that replays
// right. It is judged, like frontier-replay, wherever Def. 6.2–6.4 define
// the emission of the run's plan: every unit recorded and closed and the
// consumer at or past every high edge (hi_i ⊑ f, Def. 3.1), from then on
// at every state. Earlier the plan is not final and the check says nothing.
var ExactEmission = Invariant{"exact-emission", "Def. 6.2–6.4, §6.5",
	"once the plan is final and the consumer at or past every high edge, the emitted stream is, key by key, the discipline's emission computed from the log, the plan and the reads (opt-in)", explore.Always, Claim, true}

// Discipline is an emission discipline as the exact-emission check
// computes it: model.Emission's pass and close over the final plan (§6.1),
// restricted to the scope (§7.7).
type Discipline struct {
	Name string
	// Pass decides whether the consumed event at pos, for a key of unit i,
	// is streamed at its place; s0 is the consumer's start.
	Pass func(p *model.Plan, l *model.Log, s0 model.Coord) model.Pass
	// Close gives a unit's entry for a key at its close.
	Close func(p *model.Plan, l *model.Log) model.CloseEntry
	// Point: every bracket must be a point (§6.4).
	Point bool
}

// The paper's disciplines (§6.2–§6.4), as model.WindowDiscard, RangeMerge and
// PointSplice compute them.
var (
	// WindowDiscard streams every event; a unit emits its survivors: rows
	// read present with no event in the window (Def. 6.2).
	WindowDiscard = Discipline{Name: "window-discard", Pass: passAll, Close: survivors}
	// RangeMerge streams an event of unit i only beyond hi_i (clause (a));
	// a unit emits M_i(k) ≠ ⊥ (Def. 6.3, 6.4).
	RangeMerge = Discipline{Name: "range-merge", Pass: beyondHigh, Close: mergedEntry}
	// PointSplice is window-discard over point brackets (§6.4).
	PointSplice = Discipline{Name: "point-splice", Pass: passAll, Close: survivors, Point: true}
)

func passAll(*model.Plan, *model.Log, model.Coord) model.Pass {
	return func(int, model.Coord) bool { return true }
}

func beyondHigh(p *model.Plan, _ *model.Log, _ model.Coord) model.Pass {
	return func(i int, pos model.Coord) bool { return pos > p.Units[i].Hi }
}

func survivors(_ *model.Plan, l *model.Log) model.CloseEntry {
	return func(u *model.Unit, k model.Key) (model.Value, bool) {
		return u.Refresh[k], u.Refresh[k] != model.Absent && !l.Touches(k, u.Window())
	}
}

func mergedEntry(_ *model.Plan, l *model.Log) model.CloseEntry {
	return func(u *model.Unit, k model.Key) (model.Value, bool) {
		v := u.Merged(l, k)
		return v, v != model.Absent
	}
}

// Emission is d's emission for the plan p over the consumed events (s0, f]
// of l, on the scope's keys, with what it kept out and copied. ok is false
// if d needs point brackets and p has another.
func (d Discipline) Emission(p *model.Plan, l *model.Log, s0, f model.Coord) (s model.Stream, st EmissionStats, ok bool) {
	if d.Point {
		for i := 0; i < int(p.N); i++ {
			if p.Units[i].Lo != p.Units[i].Hi {
				return nil, st, false
			}
		}
	}
	pass, close := d.Pass(p, l, s0), d.Close(p, l)
	all := model.Emission(p, l, s0, f,
		func(i int, pos model.Coord) bool {
			ok := pass(i, pos)
			if ok {
				st.Streamed = st.Streamed.With(l.At(pos).Key)
			} else {
				st.Withheld++
			}
			return ok
		},
		func(u *model.Unit, k model.Key) (model.Value, bool) {
			v, ok := close(u, k)
			if ok {
				st.Closes++
				st.Copied = st.Copied.With(k)
			}
			return v, ok
		})
	for _, e := range all {
		if p.Scope().Has(e.Key) { // another table's row never reaches the sink (§7.7)
			s = append(s, e)
		}
	}
	return s, st, true
}

// EmissionStats says what an emission holds beyond its entries.
type EmissionStats struct {
	Closes   int          // close entries
	Withheld int          // consumed events of the units' keys not streamed
	Copied   model.KeySet // keys with a close entry
	Streamed model.KeySet // keys of the units with a streamed event
}

// judged reports whether exact-emission judges c: every one of units
// recorded and closed, the consumer at or past the latest high edge.
func judged(c *model.Capture, units int) bool {
	return c.AllClosed(units) && c.Pos >= c.Plan.LatestHigh()
}

// CheckExactEmission: once c's plan is final and the consumer at or past
// every high edge, the stream c emitted (its digest, model.Capture.Emitted)
// equals d's emission from c's start to its position, key by key (each
// key's entries in order; a per-key sink cannot see the order across keys,
// and range-merge's chunks close in any order, Def. 6.4). A capture that
// keeps no digest cannot be judged, and fails.
func CheckExactEmission(c *model.Capture, units int, d Discipline) string {
	if !judged(c, units) {
		return ""
	}
	if !c.Digesting {
		return "the capture keeps no digest of its stream (model.Capture.Digesting): exact-emission cannot be judged"
	}
	p := c.FinalPlan()
	want, _, ok := d.Emission(&p, &c.Log, c.Start, c.Pos)
	if !ok {
		return fmt.Sprintf("the plan has a bracket that is not a point, which %s needs (§6.4)", d.Name)
	}
	w := want.Digest()
	if w == c.Emitted {
		return ""
	}
	for k := model.Key(0); k < model.MaxKeys; k++ {
		if w.N[k] != c.Emitted.N[k] {
			return fmt.Sprintf("key %v: the stream carries %d entries, the %s emission from s0 = %d to %d carries %d: %s",
				k, c.Emitted.N[k], d.Name, c.Start, c.Pos, w.N[k], entriesOf(want, k))
		}
	}
	return fmt.Sprintf("each key carries as many entries as the %s emission from s0 = %d to %d, but not the same ones: %s",
		d.Name, c.Start, c.Pos, entriesOf(want, model.NoKey))
}

// entriesOf lists s's entries for k (every entry for NoKey), or "none".
func entriesOf(s model.Stream, k model.Key) string {
	var parts []string
	for _, e := range s {
		if k == model.NoKey || e.Key == k {
			parts = append(parts, e.String())
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// EmissionJudged (sometimes; shows exact-emission is not vacuous): the check
// judged a stream holding copied rows and log events in which either the
// discipline kept out something a capture sending every consumed event and
// every row it read would send (a buffered row discarded, an event
// withheld), or one key carries both a copied row and an event, so their
// order was judged (a point splice keeps nothing out, §6.4).
func EmissionJudged(c *model.Capture, units int, d Discipline) string {
	if !judged(c, units) || !c.Digesting {
		return ""
	}
	p := c.FinalPlan()
	s, st, ok := d.Emission(&p, &c.Log, c.Start, c.Pos)
	if !ok || st.Closes == 0 || len(s) == st.Closes {
		return ""
	}
	present := 0
	for i := 0; i < int(p.N); i++ {
		present += bits.OnesCount16(uint16(p.Units[i].Present()))
	}
	both := st.Copied & st.Streamed
	if st.Withheld == 0 && st.Closes >= present && both == 0 {
		return ""
	}
	return fmt.Sprintf("judged %d entries (%d copied, %d events withheld, %d of %d rows read present not copied, %d keys with a copy and an event): %s",
		len(s), st.Closes, st.Withheld, max(present-st.Closes, 0), present, bits.OnesCount16(uint16(both)), entriesOf(s, model.NoKey))
}
