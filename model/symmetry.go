package model

// Values are symbols: what the paper claims (§3, §4) compares values only
// for equality and with ⊥, never by which value is which, so renaming the
// values 1..V by a permutation maps a run to a run and keeps every claim's
// verdict. A model can then count states up to that renaming (TLC's
// SYMMETRY over a set of model values).
//
// Only values are renamed. ⊥ stays ⊥, and nothing else in a Capture is a
// value: keys, coordinates, tags and transaction labels keep their names,
// and so does a watermark marker's image (Key = NoKey), which names a chunk.

// Renaming maps each value v to r[v]; a renaming keeps Absent and is a
// permutation of the values it is applied to.
type Renaming [256]Value

// Identity returns the renaming that changes nothing.
func Identity() Renaming {
	var r Renaming
	for v := range r {
		r[v] = Value(v)
	}
	return r
}

// Namer names values 1, 2, 3, ... in the order it first meets them: the
// canonical renaming of a state is the one a Namer builds while scanning
// the state in a fixed order, so two states that differ only by a renaming
// get one canonical form.
type Namer struct {
	r    Renaming // 0 = not met yet
	next Value
}

// Name returns v's canonical name, naming v if it is met for the first
// time; Absent stays Absent.
func (n *Namer) Name(v Value) Value {
	if v == Absent {
		return Absent
	}
	if n.r[v] == Absent {
		n.next++
		n.r[v] = n.next
	}
	return n.r[v]
}

// Renaming returns the renaming built so far, completed into a permutation:
// the values not met are named after the others, in increasing order.
func (n *Namer) Renaming() Renaming {
	r, next := n.r, n.next
	for v := 1; v < len(r); v++ {
		if r[v] == Absent {
			next++
			r[v] = next
		}
	}
	return r
}

// RenameValues renames every value c holds by r: the initial store, the
// images of the row events (not the markers), the refreshes of the
// recorded units, and the replayed values (and the sink's, under a
// SinkRule).
func (c *Capture) RenameValues(r *Renaming) {
	c.mapValues(func(v Value) Value { return r[v] })
}

// NameValues renames c's values by n, scanning them in the fixed order of
// RenameValues: the initial store, the log's row images in log order, each
// recorded unit's refresh, then the replayed values. A protocol whose
// control state holds values goes on scanning them with the same Namer.
func (c *Capture) NameValues(n *Namer) {
	c.mapValues(n.Name)
}

// mapValues replaces every value v in c by f(v), in scan order. Only the
// fields AppendTo encodes are touched: events past the log's end and units
// past the plan's end are zero.
func (c *Capture) mapValues(f func(Value) Value) {
	for k := range c.Log.Init {
		c.Log.Init[k] = f(c.Log.Init[k])
	}
	for i := range int(c.Log.N) {
		if e := &c.Log.Ev[i]; e.Key != NoKey {
			e.Img = f(e.Img)
		}
	}
	for i := range int(c.Plan.N) {
		u := &c.Plan.Units[i]
		for k := range u.Refresh {
			u.Refresh[k] = f(u.Refresh[k])
		}
	}
	for k := range c.Out.Val {
		c.Out.Val[k] = f(c.Out.Val[k])
	}
	if c.Rule != 0 { // the sink's values, encoded only under a rule
		for k := range c.Sink.Val {
			c.Sink.Val[k] = f(c.Sink.Val[k])
		}
	}
}
