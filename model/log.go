package model

import (
	"iter"
	"math/bits"
	"strconv"
	"unsafe"
)

// Bounds of the fixed-size types. They exceed every bound a model is run at.
const (
	MaxKeys  = 8  // keys 0..MaxKeys-1
	MaxLog   = 32 // committed events, markers included
	MaxUnits = 4  // units of one plan
)

// Key is a stable logical row identity in K = {0..K-1} (§2.1).
type Key uint8

// NoKey marks an event outside the capture scope, such as a watermark row.
const NoKey Key = 0xFF

func (k Key) String() string {
	if k == NoKey {
		return "marker"
	}
	return "k" + strconv.Itoa(int(k))
}

// Value is a value in {1..V}; Absent (0) is ⊥, the key is not present.
type Value uint8

// Absent is ⊥.
const Absent Value = 0

func (v Value) String() string {
	if v == Absent {
		return "⊥"
	}
	return strconv.Itoa(int(v))
}

// Coord is a coordinate read as a prefix length (Def. 2.1): c denotes the
// first c committed events.
type Coord uint8

// Offset is a coordinate as the log names it, where its positions need not
// start at 1 (Log.Shift): what a sink rule compares and traces show. It is
// wider than a Coord, so a rule that keeps a byte of it, or compares it as
// text, meets positions past 9 and past 255.
type Offset uint32

// Event is one committed row event: the key's post-image (Absent for a delete)
// and the label of the transaction that committed it (§2.1, §7.4).
type Event struct {
	Key Key
	Img Value
	Txn uint8 // 1-based; equal labels form one contiguous block
}

// Store is a state σ: K ⇀ V, Absent where a key is not present.
type Store [MaxKeys]Value

// Log is the committed history, in commit order, over an initial store (the
// rows that exist before the history starts; empty unless a run says
// otherwise). Transactions are appended whole (S-LOG), so the log never holds
// part of a transaction.
type Log struct {
	Init Store
	N    uint8
	Ev   [MaxLog]Event
	// Shift is how many positions the log names before its first: position
	// p (a prefix length, 1 for the first event) is named p+Shift, so the
	// positions start at Shift+1, the run's coordinate base. The model
	// counts from 1 whatever the shift (its states, and so its state graph,
	// are the same); Offset applies it where a position leaves the model.
	Shift uint16
}

// Offset is coordinate p as the log names it: p+Shift.
func (l *Log) Offset(p Coord) Offset { return Offset(p) + Offset(l.Shift) }

// events is the log's events as bytes, three an event (key, image,
// label), as AppendTo writes them: copied as a block, they are written
// and read a word at a time, not a byte at a time.
func (l *Log) events() []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&l.Ev)), 3*int(l.N))
}

// An event is three bytes, without padding (events).
var _ [unsafe.Sizeof(Event{}) - 3]struct{}
var _ [3 - unsafe.Sizeof(Event{})]struct{}

// Len is the coordinate of the whole log.
func (l *Log) Len() Coord { return Coord(l.N) }

// At returns the event at 1-based position p. A position past the end of the
// log holds no event: At reports a marker there, never a zero event for key 0.
func (l *Log) At(p Coord) Event {
	if p > l.Len() {
		return Event{Key: NoKey}
	}
	return l.Ev[p-1]
}

// Txns is the number of committed transactions (labels are 1..Txns).
func (l *Log) Txns() uint8 {
	if l.N == 0 {
		return 0
	}
	return l.Ev[l.N-1].Txn
}

// Commit appends one transaction: its events get the next label. It reports
// false, and leaves the log unchanged, if the events do not fit.
func (l *Log) Commit(events ...Event) bool {
	if int(l.N)+len(events) > MaxLog || len(events) == 0 {
		return false
	}
	label := l.Txns() + 1
	for _, e := range events {
		e.Txn = label
		l.Ev[l.N] = e
		l.N++
	}
	return true
}

// Sigma is σ_c(k): the image of the last event for k among positions 1..c,
// or the initial value if there is none (the per-key fold, §2.1).
// Coordinates past the end of the log denote the whole log.
func (l *Log) Sigma(c Coord, k Key) Value {
	for p := int(min(c, l.Len())); p >= 1; p-- {
		if e := l.Ev[p-1]; e.Key == k {
			return e.Img
		}
	}
	return l.Init[k]
}

// State is σ_c over all keys.
func (l *Log) State(c Coord) Store {
	s := l.Init
	for p := 0; p < int(min(c, l.Len())); p++ {
		if e := l.Ev[p]; e.Key != NoKey {
			s[e.Key] = e.Img
		}
	}
	return s
}

// Last returns the image and position of the last event for k in window w;
// ok is false when the window holds no event for k.
func (l *Log) Last(k Key, w Window) (img Value, at Coord, ok bool) {
	for p := min(w.Hi, l.Len()); p > w.Lo; p-- {
		if e := l.Ev[p-1]; e.Key == k {
			return e.Img, p, true
		}
	}
	return Absent, 0, false
}

// Touches reports whether window w holds an event for k.
func (l *Log) Touches(k Key, w Window) bool {
	_, _, ok := l.Last(k, w)
	return ok
}

// Boundary reports whether no transaction straddles coordinate c: no position
// at or before c shares a label with a position after c (§7.4).
func (l *Log) Boundary(c Coord) bool {
	return c == 0 || c >= l.Len() || l.Ev[c-1].Txn != l.Ev[c].Txn
}

// TxnSet is a set of transaction labels (bit i = label i), an executed set.
type TxnSet uint64

// Has reports whether label t is in the set.
func (s TxnSet) Has(t uint8) bool { return s&(1<<t) != 0 }

// Executed is G(c), the labels of the events at positions 1..c (§7.4).
func (l *Log) Executed(c Coord) TxnSet {
	var s TxnSet
	for p := 0; p < int(min(c, l.Len())); p++ {
		s |= 1 << l.Ev[p].Txn
	}
	return s
}

// InSampledWindow is read-only capture's membership test (Theorem 7): the
// event at p lies in the window iff its label is in high and not in low.
func (l *Log) InSampledWindow(p Coord, low, high TxnSet) bool {
	t := l.At(p).Txn
	return high.Has(t) && !low.Has(t)
}

// Window is the half-open window (Lo, Hi]: positions Lo+1..Hi (Def. 2.2).
type Window struct{ Lo, Hi Coord }

// Contains reports whether position p lies in the window.
func (w Window) Contains(p Coord) bool { return w.Lo < p && p <= w.Hi }

func (w Window) String() string {
	return "(" + strconv.Itoa(int(w.Lo)) + ", " + strconv.Itoa(int(w.Hi)) + "]"
}

// KeySet is a set of keys (bit k = key k).
type KeySet uint16

// Has reports whether k is in the set.
func (s KeySet) Has(k Key) bool { return s&(1<<k) != 0 }

// With returns the set with k added.
func (s KeySet) With(k Key) KeySet { return s | 1<<k }

// Without returns the set with k removed.
func (s KeySet) Without(k Key) KeySet { return s &^ (1 << k) }

// Lowest is the smallest key of the set, NoKey if it is empty. The checks
// on the explorer's hot path visit a set's keys as
//
//	for r := s; r != 0; r &= r - 1 { k := r.Lowest(); … }
//
// which costs half as much as ranging over Keys.
func (s KeySet) Lowest() Key {
	if s == 0 {
		return NoKey
	}
	return Key(bits.TrailingZeros16(uint16(s)))
}

// Keys yields the keys of the set below MaxKeys in increasing order. The
// checks on the explorer's hot path range over a unit's keys this way
// rather than over every key there could be.
func (s KeySet) Keys() iter.Seq[Key] {
	return func(yield func(Key) bool) {
		for s &= 1<<MaxKeys - 1; s != 0; s &= s - 1 {
			if !yield(Key(bits.TrailingZeros16(uint16(s)))) {
				return
			}
		}
	}
}

// Range returns {lo..hi-1}.
func Range(lo, hi Key) KeySet {
	if lo >= hi {
		return 0
	}
	return KeySet(1<<hi - 1<<lo)
}
