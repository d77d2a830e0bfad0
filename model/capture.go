package model

import "slices"

// Capture is the part of a running capture's state that the paper's claims are
// about, shared by every protocol model: the committed log, the plan recorded
// so far, where each key was read (latent: the model knows it, the capture does
// not — §10), how far the consumer has processed the log, and the replay of
// what has been emitted. Protocol states embed one beside their control state.
//
// Conventions every protocol keeps, and the invariants rely on:
//   - a unit is added to Plan when its domain is known; until its high edge is
//     recorded its Hi is below its Lo (traces show "?");
//   - Pos and Start stay 0 until the consumer exists; StartLater moves both
//     while nothing is consumed, and positions at or before Start are never
//     consumed (S-OBS);
//   - every emitted entry goes through Emit, tagged with the log position it
//     stands for (an event's own position, a close block's high edge);
//   - bit i of Closed is set when unit i has emitted its close, and only then
//     do the cut invariants judge its keys.
type Capture struct {
	Log     Log
	Plan    Plan           // units recorded so far; Plan.Frontier is unused (Pos is the frontier)
	ReadAt  [MaxKeys]Coord // latent coordinate each read key reflects
	Pos     Coord          // the consumer has processed positions Start+1..Pos
	Start   Coord          // consumption start s0
	Out     Replayed       // replay of the emitted stream, with each key's last tag
	Closed  uint8          // bit i: unit i has emitted its close block
	Partial bool           // the log ends inside a transaction (out of contract)
	// Dup marks the keys that received an entry with the same non-zero tag
	// as the entry before it, in the steps since the state was decoded. It
	// is a mark of a step, not part of the state: AppendTo leaves it out,
	// so it never tells two states apart and costs no states; the
	// no-duplicate-delivery check reads what a step added to it.
	Dup KeySet
}

// UnitClosed reports whether unit i has closed.
func (c *Capture) UnitClosed(i int) bool { return c.Closed&(1<<i) != 0 }

// AllClosed reports whether n units have been recorded and all have closed.
func (c *Capture) AllClosed(n int) bool {
	return int(c.Plan.N) == n && c.Closed == uint8(1<<n)-1
}

// Emit folds one emitted entry into Out; false means it broke per-key
// monotonicity (Thm 3 / Thm 5).
func (c *Capture) Emit(k Key, v Value, tag Coord) bool {
	if tag != 0 && tag == c.Out.Tag[k] {
		c.Dup = c.Dup.With(k)
	}
	return c.Out.Apply(Entry{k, v, tag})
}

// FinalPlan is the recorded plan with its frontier set to the consumer position.
func (c *Capture) FinalPlan() Plan {
	p := c.Plan
	p.Frontier = c.Pos
	return p
}

// AppendTo appends a canonical encoding of c to buf. Per-key fields are
// written for the keys in scope only (Plan.Keys of them), all of them if a
// key beyond the scope holds anything, and the width comes first: equal
// encodings still mean equal captures, and at three keys of eight a state
// is a third shorter to encode, hash, queue and decode. It is on the
// explorer's hot path (every successor is encoded), so it grows buf once
// and writes by index.
func (c *Capture) AppendTo(buf []byte) []byte {
	w := c.width()
	head, unitLen, tail := w+2, 6+w, 3*w+4
	n, units := int(c.Log.N), int(c.Plan.N)
	at := len(buf)
	size := head + 3*n + 3 + unitLen*units + tail
	buf = slices.Grow(buf, size)[:at+size]
	b := buf[at:]
	b[0] = byte(w)
	for k := range w {
		b[1+k] = byte(c.Log.Init[k])
	}
	b[1+w] = c.Log.N
	b = b[head:]
	for i, e := range c.Log.Ev[:n] {
		b[3*i], b[3*i+1], b[3*i+2] = byte(e.Key), byte(e.Img), e.Txn
	}
	b = b[3*n:]
	p := &c.Plan
	b[0], b[1], b[2] = p.Keys, p.N, byte(p.Frontier)
	b = b[3:]
	for i := range units {
		u, ub := &p.Units[i], b[i*unitLen:(i+1)*unitLen]
		ub[0], ub[1], ub[2], ub[3], ub[4], ub[5] = byte(u.Domain), byte(u.Domain>>8), byte(u.Lo), byte(u.Hi), byte(u.Read), byte(u.Read>>8)
		for k := range w {
			ub[6+k] = byte(u.Refresh[k])
		}
	}
	b = b[unitLen*units:]
	for k := range w {
		b[3*k], b[3*k+1], b[3*k+2] = byte(c.ReadAt[k]), byte(c.Out.Val[k]), byte(c.Out.Tag[k])
	}
	b = b[3*w:]
	var partial byte
	if c.Partial {
		partial = 1
	}
	b[0], b[1], b[2], b[3] = byte(c.Pos), byte(c.Start), c.Closed, partial
	return buf
}

// width is how many keys' fields AppendTo writes: the scope's, unless a
// key beyond it holds a value, a coordinate or a recorded unit's refresh
// (only a capture built by hand does), then every key's.
func (c *Capture) width() int {
	w := min(int(c.Plan.Keys), MaxKeys)
	var any Value
	for k := w; k < MaxKeys; k++ {
		any |= c.Log.Init[k] | c.Out.Val[k] | Value(c.Out.Tag[k]) | Value(c.ReadAt[k])
		for i := range c.Plan.N {
			any |= c.Plan.Units[i].Refresh[k]
		}
	}
	if any != 0 {
		return MaxKeys
	}
	return w
}

// DecodeCapture reads what AppendTo wrote and returns the rest of b; ok is
// false if b is too short.
func DecodeCapture(b []byte) (c Capture, rest []byte, ok bool) {
	rest, ok = c.DecodeFrom(b)
	return c, rest, ok
}

// DecodeFrom reads what AppendTo wrote into c, which must be the zero
// Capture (a model's Decode target is), and returns the rest of b; ok is
// false if b is too short. It writes in place: a capture is some 200 bytes,
// and decoding is on the explorer's hot path.
func (c *Capture) DecodeFrom(b []byte) (rest []byte, ok bool) {
	if len(b) < 1 || int(b[0]) > MaxKeys || len(b) < int(b[0])+2 {
		return nil, false
	}
	w := int(b[0])
	head, unitLen, tail := w+2, 6+w, 3*w+4
	for k := range w {
		c.Log.Init[k] = Value(b[1+k])
	}
	n := int(b[1+w])
	if n > MaxLog || len(b) < head+3*n+3 {
		return nil, false
	}
	c.Log.N = uint8(n)
	b = b[head:]
	for i := range n {
		c.Log.Ev[i] = Event{Key(b[3*i]), Value(b[3*i+1]), b[3*i+2]}
	}
	b = b[3*n:]
	p := &c.Plan
	p.Keys, p.N, p.Frontier = b[0], b[1], Coord(b[2])
	units := int(p.N)
	if units > MaxUnits || len(b) < 3+unitLen*units+tail {
		return nil, false
	}
	b = b[3:]
	for i := range units {
		u, ub := &p.Units[i], b[i*unitLen:]
		u.Domain = KeySet(ub[0]) | KeySet(ub[1])<<8
		u.Lo, u.Hi = Coord(ub[2]), Coord(ub[3])
		u.Read = KeySet(ub[4]) | KeySet(ub[5])<<8
		for k := range w {
			u.Refresh[k] = Value(ub[6+k])
		}
	}
	b = b[unitLen*units:]
	for k := range w {
		c.ReadAt[k], c.Out.Val[k], c.Out.Tag[k] = Coord(b[3*k]), Value(b[3*k+1]), Coord(b[3*k+2])
	}
	b = b[3*w:]
	c.Pos, c.Start, c.Closed, c.Partial = Coord(b[0]), Coord(b[1]), b[2], b[3] == 1
	return b[4:], true
}
