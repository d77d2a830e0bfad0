package model

// Survivors are the keys of the unit read present with no event in its window
// (Def. 6.2): the buffered rows window-discard emits at the close.
func (u *Unit) Survivors(l *Log) KeySet {
	var s KeySet
	for k := range u.Domain.Keys() {
		if u.Refresh[k] != Absent && !l.Touches(k, u.Window()) {
			s = s.With(k)
		}
	}
	return s
}

// Merged is M_i(k) (Def. 6.3): the last event for k in (lo, hi], else R(k).
func (u *Unit) Merged(l *Log, k Key) Value { return u.MergedIn(l, u.Window(), k) }

// MergedIn is M_i(k) over the window w, for a capture that backfills
// another window than (lo, hi]: the last event for k in w, else R(k).
func (u *Unit) MergedIn(l *Log, w Window, k Key) Value {
	if v, _, ok := l.Last(k, w); ok {
		return v
	}
	return u.Refresh[k]
}

// WindowDiscard is the window-discard emission (Def. 6.2): one pass over the
// consumed events (s0, f], each emitted at its own place; a unit closes just
// before the first consumed event beyond its high edge (or at the end) and
// emits one entry per survivor, tagged with its high edge. It assumes
// s0 ⊑ lo_i for every unit (S-OBS for this discipline).
func WindowDiscard(p *Plan, l *Log, s0, f Coord) Stream {
	return Emission(p, l, s0, f, func(i int, pos Coord) bool { return true },
		func(u *Unit, k Key) (Value, bool) {
			return u.Refresh[k], u.Refresh[k] != Absent && !l.Touches(k, u.Window())
		})
}

// RangeMerge is the gated range-merge emission (Def. 6.4): an event for a key
// of unit i passes only beyond hi_i (clause (a)); at the close the unit emits
// M_i(k) for every key with M_i(k) ≠ ⊥, tagged with hi_i. It assumes s0 ⊑ hi_i.
func RangeMerge(p *Plan, l *Log, s0, f Coord) Stream {
	return Emission(p, l, s0, f, func(i int, pos Coord) bool { return pos > p.Units[i].Hi }, merged(l))
}

// WindowNarrowed is Proposition 3's wrong variant of range-merge: only the
// window's own events are absorbed into the buffer, every other consumed event
// is streamed — pre-bracket events included.
func WindowNarrowed(p *Plan, l *Log, s0, f Coord) Stream {
	return Emission(p, l, s0, f, func(i int, pos Coord) bool { return !p.Units[i].Window().Contains(pos) }, merged(l))
}

// PointSplice is the point-splice emission (§6.4): window-discard over point
// brackets, so every present read is emitted at its splice coordinate. ok is
// false if some unit's bracket is not a point.
func PointSplice(p *Plan, l *Log, s0, f Coord) (s Stream, ok bool) {
	for i := 0; i < int(p.N); i++ {
		if p.Units[i].Lo != p.Units[i].Hi {
			return nil, false
		}
	}
	return WindowDiscard(p, l, s0, f), true
}

func merged(l *Log) CloseEntry {
	return func(u *Unit, k Key) (Value, bool) {
		v := u.Merged(l, k)
		return v, v != Absent
	}
}

// Pass decides whether the consumed event at pos, for a key of unit i, is
// streamed at its place (rather than withheld or discarded).
type Pass func(i int, pos Coord) bool

// CloseEntry gives unit u's entry for key k at its close, if it emits one.
type CloseEntry func(u *Unit, k Key) (Value, bool)

// Emission is the one pass every discipline shares (§6.1): over the consumed
// events (s0, f], each event of a key no unit owns is streamed at its place,
// an event of unit i's key only if pass says so; a unit closes just before
// the first consumed event beyond its high edge (or at the end) and emits its
// close entries, tagged with its high edge. WindowDiscard, RangeMerge and
// PointSplice are Emission with the paper's pass and close; a new discipline
// is another pair.
func Emission(p *Plan, l *Log, s0, f Coord, pass Pass, close CloseEntry) Stream {
	var out Stream
	var closed [MaxUnits]bool
	closeUpTo := func(pos Coord) { // close units with hi < pos
		for i := 0; i < int(p.N); i++ {
			u := &p.Units[i]
			if closed[i] || u.Hi >= pos {
				continue
			}
			closed[i] = true
			for k := range u.Domain.Keys() {
				if v, ok := close(u, k); ok {
					out = append(out, Entry{k, v, u.Hi})
				}
			}
		}
	}
	for pos := s0 + 1; pos <= f; pos++ {
		closeUpTo(pos)
		e := l.At(pos)
		if e.Key == NoKey {
			continue
		}
		if i := p.Owner(e.Key); i >= 0 && !pass(i, pos) {
			continue
		}
		out = append(out, Entry{e.Key, e.Img, pos})
	}
	closeUpTo(f + 1)
	return out
}
