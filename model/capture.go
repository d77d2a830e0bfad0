package model

import (
	"encoding/binary"
	"slices"
)

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
	// Delivered is the keys whose last entry was a log event, or a copy
	// tagged with the position of an event on that key that was delivered
	// before it: the event at Out.Tag[k] has reached the sink. It is what
	// tells a log event delivered twice from a copied row that shares the
	// event's tag (a copy at hi after the event at hi, §6.2).
	Delivered KeySet
	// Dup marks the keys that received a log event already delivered (its
	// position is the key's last tag and Delivered holds the key), and
	// Inexact the keys that received an entry whose value is not σ_tag of
	// its key, in the steps since the state was decoded. They are marks of
	// a step, not part of the state: AppendTo leaves them out, so they
	// never tell two states apart and cost no states; the
	// no-duplicate-delivery and exact-tags checks read what a step added.
	Dup, Inexact KeySet
	// Rule is the number of the sink's merge rule (SinkRule.ID); 0 is
	// last-writer-wins, under which the sink holds Out, the replay of the
	// stream (Def. 6.1).
	Rule uint8
	// Sink is what the sink holds under another Rule: each key's value and
	// the tag of the entry it took last. It may differ from Out, so it is
	// then part of the state (encoded) and the search stays exact.
	Sink Replayed
	// Digesting keeps Emitted, the digest of the emitted stream, which the
	// exact-emission check compares with the discipline's emission (§6).
	// It is set only when that check runs: Emitted is then part of the
	// state (encoded), and otherwise neither it nor the counts change.
	Digesting bool
	Emitted   Digest
}

// SinkRule is the sink's merge rule, LastWriterWins when Rule is 0.
func (c *Capture) SinkRule() *SinkRule { return rules[c.Rule] }

// Held is what the sink holds: Out under last-writer-wins, Sink under a
// Rule. The replay and cut claims judge it; the stream claims judge Out.
func (c *Capture) Held() *Replayed {
	if c.Rule != 0 {
		return &c.Sink
	}
	return &c.Out
}

// UnitClosed reports whether unit i has closed.
func (c *Capture) UnitClosed(i int) bool { return c.Closed&(1<<i) != 0 }

// AllClosed reports whether n units have been recorded and all have closed.
func (c *Capture) AllClosed(n int) bool {
	return int(c.Plan.N) == n && c.Closed == uint8(1<<n)-1
}

// Emit folds one emitted log event into Out: the event on k at position
// tag, or an entry that carries it (a merged block whose last window event
// on k is at its tag). False means it broke per-key monotonicity (Thm 3 /
// Thm 5).
func (c *Capture) Emit(k Key, v Value, tag Coord) bool {
	if tag != 0 && tag == c.Out.Tag[k] && c.Delivered.Has(k) {
		c.Dup = c.Dup.With(k)
	}
	c.Delivered = c.Delivered.With(k)
	return c.emit(k, v, tag, false)
}

// EmitCopy folds one copied row into Out: a value read from the source,
// not a log event, tagged with the coordinate it stands for (a survivor's
// high edge, Lemma 4.1). A copy sharing the tag of an event already
// delivered on its key leaves that event delivered.
func (c *Capture) EmitCopy(k Key, v Value, tag Coord) bool {
	if tag != c.Out.Tag[k] {
		c.Delivered = c.Delivered.Without(k)
	}
	return c.emit(k, v, tag, true)
}

// emit marks an inexact entry (its value is not σ_tag(k), or its tag is past
// the log), hands it to the sink's Rule if there is one, and folds it into
// Out.
func (c *Capture) emit(k Key, v Value, tag Coord, copied bool) bool {
	if tag > c.Log.Len() || v != c.Log.Sigma(tag, k) {
		c.Inexact = c.Inexact.With(k)
	}
	e := Entry{k, v, tag}
	if c.Digesting {
		c.Emitted.Add(e)
	}
	if c.Rule != 0 && rules[c.Rule].Take(c.Sink.Val[k], c.Log.Offset(c.Sink.Tag[k]), Offered{k, v, c.Log.Offset(tag)}, copied) {
		c.Sink.Val[k], c.Sink.Tag[k] = v, tag
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
// explorer's hot path (every successor is encoded): it grows buf once and
// writes a per-key field as one 8-byte word, the next field overwriting
// what lies past the width (hence 8 bytes of slack). Under a Rule the
// width's high bit is set and the rule and Sink follow. A Digesting
// capture sets the width's next bit and appends Emitted; with a Log.Shift
// the bit after is set and the shift's two bytes come last: a
// last-writer-wins capture whose positions start at 1 is encoded as it
// always was.
func (c *Capture) AppendTo(buf []byte) []byte {
	w := c.width()
	n, units := int(c.Log.N), int(c.Plan.N)
	at := len(buf)
	size := 1 + w + 1 + 3*n + 3 + (6+w)*units + 3*w + 5
	if c.Rule != 0 {
		size += 1 + 2*w
	}
	if c.Digesting {
		size += w + 8
	}
	if c.Log.Shift != 0 {
		size += 2
	}
	buf = slices.Grow(buf, size+8)[:at+size+8]
	b := buf[at:]
	b[0] = byte(w)
	putWord(b[1:], word((*[MaxKeys]Value)(&c.Log.Init)))
	o := 1 + w
	b[o] = c.Log.N
	o++
	o += copy(b[o:], c.Log.events())
	p := &c.Plan
	b[o], b[o+1], b[o+2] = p.Keys, p.N, byte(p.Frontier)
	o += 3
	for i := range units {
		u := &p.Units[i]
		b[o], b[o+1], b[o+2], b[o+3], b[o+4], b[o+5] = byte(u.Domain), byte(u.Domain>>8), byte(u.Lo), byte(u.Hi), byte(u.Read), byte(u.Read>>8)
		putWord(b[o+6:], word((*[MaxKeys]Value)(&u.Refresh)))
		o += 6 + w
	}
	putWord(b[o:], word(&c.ReadAt))
	putWord(b[o+w:], word((*[MaxKeys]Value)(&c.Out.Val)))
	putWord(b[o+2*w:], word(&c.Out.Tag))
	o += 3 * w
	var partial byte
	if c.Partial {
		partial = 1
	}
	b[o], b[o+1], b[o+2], b[o+3], b[o+4] = byte(c.Pos), byte(c.Start), c.Closed, partial, byte(c.Delivered)
	if c.Rule != 0 {
		b[0] |= sinkFlag
		b[o+5] = c.Rule
		putWord(b[o+6:], word((*[MaxKeys]Value)(&c.Sink.Val)))
		putWord(b[o+6+w:], word(&c.Sink.Tag))
		o += 1 + 2*w
	}
	if c.Digesting {
		b[0] |= digestFlag
		putWord(b[o+5:], word(&c.Emitted.N))
		putWord(b[o+5+w:], c.Emitted.Sum)
		o += w + 8
	}
	if c.Log.Shift != 0 {
		b[0] |= shiftFlag
		b[o+5], b[o+6] = byte(c.Log.Shift), byte(c.Log.Shift>>8)
	}
	return buf[:at+size]
}

// sinkFlag marks an encoding with Sink, digestFlag one with Emitted,
// shiftFlag one with Log.Shift (the width byte is at most MaxKeys).
const (
	sinkFlag   = 0x80
	digestFlag = 0x40
	shiftFlag  = 0x20
	flags      = sinkFlag | digestFlag | shiftFlag
)

// width is how many keys' fields AppendTo writes: the scope's, unless a
// key beyond it holds a value, a coordinate or a recorded unit's refresh
// (only a capture built by hand does), then every key's.
func (c *Capture) width() int {
	w := min(int(c.Plan.Keys), MaxKeys)
	if w == MaxKeys {
		return w
	}
	held := word((*[MaxKeys]Value)(&c.Log.Init)) | word((*[MaxKeys]Value)(&c.Out.Val)) | word(&c.Out.Tag) | word(&c.ReadAt) |
		word((*[MaxKeys]Value)(&c.Sink.Val)) | word(&c.Sink.Tag) | word(&c.Emitted.N)
	for i := range c.Plan.N {
		held |= word((*[MaxKeys]Value)(&c.Plan.Units[i].Refresh))
	}
	if held>>(8*w) != 0 {
		return MaxKeys
	}
	return w
}

// word is a per-key array as one little-endian word (MaxKeys is 8: key k
// is byte k). The compiler turns it into one load.
func word[T ~uint8](a *[MaxKeys]T) uint64 {
	return uint64(a[0]) | uint64(a[1])<<8 | uint64(a[2])<<16 | uint64(a[3])<<24 |
		uint64(a[4])<<32 | uint64(a[5])<<40 | uint64(a[6])<<48 | uint64(a[7])<<56
}

// setWord sets a per-key array from a word, as one store.
func setWord[T ~uint8](a *[MaxKeys]T, x uint64) {
	a[0], a[1], a[2], a[3] = T(x), T(x>>8), T(x>>16), T(x>>24)
	a[4], a[5], a[6], a[7] = T(x>>32), T(x>>40), T(x>>48), T(x>>56)
}

// getWord reads the w bytes of a per-key field at the start of b as a word,
// zero past w: one load when b holds 8 bytes.
func getWord(b []byte, w int) uint64 {
	if len(b) >= 8 {
		return binary.LittleEndian.Uint64(b) & (1<<(8*w) - 1)
	}
	var x uint64
	for k := range w {
		x |= uint64(b[k]) << (8 * k)
	}
	return x
}

// putWord writes x little-endian into b[:8], as one store.
func putWord(b []byte, x uint64) {
	binary.LittleEndian.PutUint64(b, x)
}

// A per-key array is one word.
var _ [MaxKeys - 8]struct{}
var _ [8 - MaxKeys]struct{}

// DecodeFrom reads what AppendTo wrote into c, which must be the zero
// Capture (a model's Decode target is), and returns the rest of b; ok is
// false if b is too short. It writes in place: a capture is some 200 bytes,
// and decoding is on the explorer's hot path.
func (c *Capture) DecodeFrom(b []byte) (rest []byte, ok bool) {
	if len(b) < 1 || int(b[0]&^flags) > MaxKeys || len(b) < int(b[0]&^flags)+2 {
		return nil, false
	}
	w, sink, digest, shift := int(b[0]&^flags), b[0]&sinkFlag != 0, b[0]&digestFlag != 0, b[0]&shiftFlag != 0
	head, unitLen, tail := w+2, 6+w, 3*w+5
	if sink {
		tail += 1 + 2*w
	}
	if digest {
		tail += w + 8
	}
	if shift {
		tail += 2
	}
	setWord((*[MaxKeys]Value)(&c.Log.Init), getWord(b[1:], w))
	n := int(b[1+w])
	if n > MaxLog || len(b) < head+3*n+3 {
		return nil, false
	}
	c.Log.N = uint8(n)
	b = b[head:]
	copy(c.Log.events(), b)
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
		setWord((*[MaxKeys]Value)(&u.Refresh), getWord(ub[6:], w))
	}
	b = b[unitLen*units:]
	setWord(&c.ReadAt, getWord(b, w))
	setWord((*[MaxKeys]Value)(&c.Out.Val), getWord(b[w:], w))
	setWord(&c.Out.Tag, getWord(b[2*w:], w))
	b = b[3*w:]
	c.Pos, c.Start, c.Closed, c.Partial = Coord(b[0]), Coord(b[1]), b[2], b[3] == 1
	c.Delivered = KeySet(b[4])
	b = b[5:]
	if sink {
		if int(b[0]) >= len(rules) {
			return nil, false // a rule this program has not made
		}
		c.Rule = b[0]
		setWord((*[MaxKeys]Value)(&c.Sink.Val), getWord(b[1:], w))
		setWord(&c.Sink.Tag, getWord(b[1+w:], w))
		b = b[1+2*w:]
	}
	if digest {
		c.Digesting = true
		setWord(&c.Emitted.N, getWord(b, w))
		c.Emitted.Sum = binary.LittleEndian.Uint64(b[w:])
		b = b[w+8:]
	}
	if shift {
		c.Log.Shift = uint16(b[0]) | uint16(b[1])<<8
		b = b[2:]
	}
	return b, true
}
