package model

import (
	"fmt"
	"math/bits"
)

// Entry is one entry of an emitted stream: a key, its value or ⊥, and a tag,
// the length of the log prefix the entry reflects (Thm 3).
type Entry struct {
	Key Key
	Val Value
	Tag Coord
}

func (e Entry) String() string { return fmt.Sprintf("%v=%v@%d", e.Key, e.Val, e.Tag) }

// Stream is an emitted stream (Def. 6.1).
type Stream []Entry

// Replay is the per-key fold of the stream from the empty store (Def. 6.1).
func (s Stream) Replay() Store {
	var r Replayed
	for _, e := range s {
		r.Apply(e)
	}
	return r.Val
}

// Monotone reports whether every key's tags are non-decreasing along the
// stream (Thm 3, Thm 5); if not, at is the index of the first entry whose tag
// is below an earlier tag for its key.
func (s Stream) Monotone() (ok bool, at int) {
	var r Replayed
	for i, e := range s {
		if !r.Apply(e) {
			return false, i
		}
	}
	return true, -1
}

// Replayed is a stream replay kept incrementally: each key's current value and
// the tag of its last entry. Protocol states hold one instead of the stream.
type Replayed struct {
	Val Store
	Tag [MaxKeys]Coord
}

// Apply folds one entry in and reports whether its tag kept the key monotone.
func (r *Replayed) Apply(e Entry) (monotone bool) {
	monotone = e.Tag >= r.Tag[e.Key]
	r.Val[e.Key] = e.Val
	r.Tag[e.Key] = e.Tag
	return monotone
}

// Regressed is the lowest key whose last tag in r is below its tag in from,
// or NoKey: a step from from to r that gives it one breaks per-key
// monotonicity (Thm 3, Thm 5). It runs on every step the explorer takes, so
// it compares the keys' tags at once, as the bytes of one word.
func (r *Replayed) Regressed(from *Replayed) Key {
	const high = 0x8080808080808080
	a, b := word(&r.Tag), word(&from.Tag)
	if (a|b)&high != 0 { // a tag of 128 or more: byte by byte
		for k := range MaxKeys {
			if r.Tag[k] < from.Tag[k] {
				return Key(k)
			}
		}
		return NoKey
	}
	// Byte k of a|high, from 128 to 255, less byte k of b, below 128,
	// borrows nothing from byte k+1 and keeps its high bit exactly when
	// r's tag is at least from's.
	below := ^((a | high) - b) & high
	if below == 0 {
		return NoKey
	}
	return Key(bits.TrailingZeros64(below) / 8)
}
