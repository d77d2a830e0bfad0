package model

// Capture is the part of a running capture's state that the paper's claims are
// about, shared by every protocol model: the committed log, the plan recorded
// so far, where each key was read (latent: the model knows it, the capture does
// not — §10), how far the consumer has processed the log, and the replay of
// what has been emitted. Protocol states embed one beside their control state.
type Capture struct {
	Log     Log
	Plan    Plan           // units recorded so far; Plan.Frontier is unused (Pos is the frontier)
	ReadAt  [MaxKeys]Coord // latent coordinate each read key reflects
	Pos     Coord          // the consumer has processed positions 1..Pos
	Start   Coord          // consumption start s0
	Out     Replayed       // replay of the emitted stream, with each key's last tag
	Closed  uint8          // bit i: unit i has emitted its close block
	Partial bool           // the log ends inside a transaction (out of contract)
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
	return c.Out.Apply(Entry{k, v, tag})
}

// FinalPlan is the recorded plan with its frontier set to the consumer position.
func (c *Capture) FinalPlan() Plan {
	p := c.Plan
	p.Frontier = c.Pos
	return p
}

// AppendTo appends a canonical encoding of c to buf: every field, fixed width.
func (c *Capture) AppendTo(buf []byte) []byte {
	for k := 0; k < MaxKeys; k++ {
		buf = append(buf, byte(c.Log.Init[k]))
	}
	buf = append(buf, c.Log.N)
	for i := 0; i < int(c.Log.N); i++ {
		e := c.Log.Ev[i]
		buf = append(buf, byte(e.Key), byte(e.Img), e.Txn)
	}
	p := &c.Plan
	buf = append(buf, p.Keys, p.N, byte(p.Frontier))
	for i := 0; i < int(p.N); i++ {
		u := &p.Units[i]
		buf = append(buf, byte(u.Domain), byte(u.Domain>>8), byte(u.Lo), byte(u.Hi), byte(u.Read), byte(u.Read>>8))
		for k := 0; k < MaxKeys; k++ {
			buf = append(buf, byte(u.Refresh[k]))
		}
	}
	for k := 0; k < MaxKeys; k++ {
		buf = append(buf, byte(c.ReadAt[k]), byte(c.Out.Val[k]), byte(c.Out.Tag[k]))
	}
	var partial byte
	if c.Partial {
		partial = 1
	}
	return append(buf, byte(c.Pos), byte(c.Start), c.Closed, partial)
}

// DecodeCapture reads what AppendTo wrote and returns the rest of b; ok is
// false if b is too short.
func DecodeCapture(b []byte) (c Capture, rest []byte, ok bool) {
	r := reader{b: b}
	for k := 0; k < MaxKeys; k++ {
		c.Log.Init[k] = Value(r.byte())
	}
	c.Log.N = r.byte()
	if int(c.Log.N) > MaxLog {
		return c, nil, false
	}
	for i := 0; i < int(c.Log.N); i++ {
		c.Log.Ev[i] = Event{Key(r.byte()), Value(r.byte()), r.byte()}
	}
	p := &c.Plan
	p.Keys, p.N, p.Frontier = r.byte(), r.byte(), Coord(r.byte())
	if int(p.N) > MaxUnits {
		return c, nil, false
	}
	for i := 0; i < int(p.N); i++ {
		u := &p.Units[i]
		u.Domain = KeySet(r.byte()) | KeySet(r.byte())<<8
		u.Lo, u.Hi = Coord(r.byte()), Coord(r.byte())
		u.Read = KeySet(r.byte()) | KeySet(r.byte())<<8
		for k := 0; k < MaxKeys; k++ {
			u.Refresh[k] = Value(r.byte())
		}
	}
	for k := 0; k < MaxKeys; k++ {
		c.ReadAt[k], c.Out.Val[k], c.Out.Tag[k] = Coord(r.byte()), Value(r.byte()), Coord(r.byte())
	}
	c.Pos, c.Start, c.Closed = Coord(r.byte()), Coord(r.byte()), r.byte()
	c.Partial = r.byte() == 1
	return c, r.b, !r.short
}

type reader struct {
	b     []byte
	short bool
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.short = true
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}
