package certify

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cutcheck/cutcheck/internal/huge"
)

// keyKind says how keys are written and ordered: "string" keys are JSON
// strings ordered byte-wise, "integer" keys are JSON integers (or strings of
// decimal digits) ordered numerically. Ranges and the order of a unit's close
// block depend on it.
type keyKind uint8

const (
	kindString keyKind = iota
	kindInteger
)

// key is a row identity with what orders it.
type key struct {
	s   string // canonical text: the string itself, or the decimal integer
	n   int64  // the integer, for kindInteger
	num bool   // an integer key (printed without quotes)
}

func (kk keyKind) parse(raw []byte) (key, error) {
	if len(raw) > 0 && raw[0] == '"' {
		s, err := decodeString(raw)
		if err != nil {
			return key{}, err
		}
		if kk == kindString {
			return key{s: s}, nil
		}
		raw = []byte(s)
	} else if kk == kindString {
		return key{}, fmt.Errorf("key %s is not a string (the bundle declares string keys)", raw)
	}
	if n, ok := fastInt(raw); ok && (n != 0 || raw[0] != '-') {
		return key{s: string(raw), n: n, num: true}, nil // already canonical
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return key{}, fmt.Errorf("key %s is not an integer (the bundle declares integer keys)", raw)
	}
	return key{s: strconv.FormatInt(n, 10), n: n, num: true}, nil
}

// fromString rebuilds a key from its canonical text.
func (kk keyKind) fromString(s string) key {
	if kk == kindInteger {
		n, _ := strconv.ParseInt(s, 10, 64)
		return key{s: s, n: n, num: true}
	}
	return key{s: s}
}

func (kk keyKind) cmp(a, b key) int {
	if kk == kindInteger {
		return cmp.Compare(a.n, b.n)
	}
	return strings.Compare(a.s, b.s)
}

// succ is the least key above k: k+1, or k followed by a zero byte.
func (kk keyKind) succ(k key) (key, bool) {
	if kk == kindInteger {
		if k.n == math.MaxInt64 {
			return key{}, false
		}
		return key{s: strconv.FormatInt(k.n+1, 10), n: k.n + 1, num: true}, true
	}
	return key{s: k.s + "\x00"}, true
}

func (k key) String() string {
	if k.num {
		return k.s
	}
	return strconv.Quote(k.s)
}

// interval is the half-open key range [lo, hi); a missing bound is unbounded.
type interval struct {
	lo, hi       key
	hasLo, hasHi bool
	unit         int // owning unit for domain intervals, -1 for scopes
}

func (kk keyKind) contains(iv interval, k key) bool {
	return (!iv.hasLo || kk.cmp(iv.lo, k) <= 0) && (!iv.hasHi || kk.cmp(k, iv.hi) < 0)
}

func (kk keyKind) empty(iv interval) bool {
	return iv.hasLo && iv.hasHi && kk.cmp(iv.lo, iv.hi) >= 0
}

// loBefore orders intervals by their low bound, unbounded first.
func (kk keyKind) loCmp(a, b interval) int {
	switch {
	case !a.hasLo && !b.hasLo:
		return 0
	case !a.hasLo:
		return -1
	case !b.hasLo:
		return 1
	}
	return kk.cmp(a.lo, b.lo)
}

// hiCmp compares high bounds, unbounded last.
func (kk keyKind) hiCmp(a, b interval) int {
	switch {
	case !a.hasHi && !b.hasHi:
		return 0
	case !a.hasHi:
		return 1
	case !b.hasHi:
		return -1
	}
	return kk.cmp(a.hi, b.hi)
}

// keySet is a scope or a unit's domain: a finite list of keys, or a union of
// key ranges (§3.1: chunks are primary-key ranges).
type keySet struct {
	kind   keyKind
	ranges bool
	keys   map[string]struct{} // when !ranges
	list   []key               // the keys, sorted, when !ranges
	ivs    []interval          // sorted by lo and merged, when ranges
}

// ScopeSpec is a scope or domain as written in a bundle: either "keys", a
// list of keys, or "ranges", a list of key ranges with bounds "ge"/"gt" and
// "lt"/"le" (each optional: a missing bound is unbounded).
type ScopeSpec struct {
	Keys   []json.RawMessage `json:"keys,omitempty"`
	Ranges []RangeSpec       `json:"ranges,omitempty"`
}

// RangeSpec is one key range.
type RangeSpec struct {
	Ge json.RawMessage `json:"ge,omitempty"`
	Gt json.RawMessage `json:"gt,omitempty"`
	Lt json.RawMessage `json:"lt,omitempty"`
	Le json.RawMessage `json:"le,omitempty"`
}

func (kk keyKind) build(spec ScopeSpec, what string) (keySet, error) {
	s := keySet{kind: kk}
	switch {
	case spec.Keys != nil && spec.Ranges != nil:
		return s, fmt.Errorf("%s gives both keys and ranges", what)
	case spec.Keys != nil:
		s.keys = make(map[string]struct{}, len(spec.Keys))
		for _, raw := range spec.Keys {
			k, err := kk.parse(raw)
			if err != nil {
				return s, fmt.Errorf("%s: %v", what, err)
			}
			if _, dup := s.keys[k.s]; dup {
				return s, fmt.Errorf("%s lists key %v twice", what, k)
			}
			s.keys[k.s] = struct{}{}
			s.list = append(s.list, k)
		}
		slices.SortFunc(s.list, kk.cmp)
	case spec.Ranges != nil:
		s.ranges = true
		for _, r := range spec.Ranges {
			iv, err := kk.interval(r)
			if err != nil {
				return s, fmt.Errorf("%s: %v", what, err)
			}
			if !kk.empty(iv) {
				s.ivs = append(s.ivs, iv)
			}
		}
		s.ivs = kk.merge(s.ivs)
	default:
		return s, fmt.Errorf("%s gives neither keys nor ranges", what)
	}
	return s, nil
}

func (kk keyKind) interval(r RangeSpec) (interval, error) {
	iv := interval{unit: -1}
	if r.Ge != nil && r.Gt != nil || r.Lt != nil && r.Le != nil {
		return iv, fmt.Errorf("a range has two bounds on one side")
	}
	var err error
	if r.Ge != nil {
		iv.lo, err = kk.parse(r.Ge)
		iv.hasLo = true
	} else if r.Gt != nil {
		var k key
		if k, err = kk.parse(r.Gt); err == nil {
			iv.lo, iv.hasLo = kk.succ(k)
			if !iv.hasLo { // nothing is above the largest integer
				iv.lo, iv.hasLo, iv.hi, iv.hasHi = k, true, k, true
			}
		}
	}
	if err != nil {
		return iv, err
	}
	if r.Lt != nil {
		iv.hi, err = kk.parse(r.Lt)
		iv.hasHi = true
	} else if r.Le != nil {
		var k key
		if k, err = kk.parse(r.Le); err == nil {
			iv.hi, iv.hasHi = kk.succ(k)
		}
	}
	return iv, err
}

// merge sorts intervals and joins the overlapping and adjacent ones.
func (kk keyKind) merge(ivs []interval) []interval {
	slices.SortFunc(ivs, kk.loCmp)
	var out []interval
	for _, iv := range ivs {
		if n := len(out); n > 0 {
			last := &out[n-1]
			if !last.hasHi || !iv.hasLo || kk.cmp(iv.lo, last.hi) <= 0 {
				if kk.hiCmp(iv, *last) > 0 {
					last.hi, last.hasHi = iv.hi, iv.hasHi
				}
				continue
			}
		}
		out = append(out, iv)
	}
	return out
}

func (s *keySet) has(k key) bool {
	if !s.ranges {
		_, ok := s.keys[k.s]
		return ok
	}
	i := s.kind.startUpTo(s.ivs, k)
	return i > 0 && s.kind.contains(s.ivs[i-1], k)
}

// startUpTo is how many of ivs, sorted by low bound, start at or below k.
func (kk keyKind) startUpTo(ivs []interval, k key) int {
	n, _ := slices.BinarySearchFunc(ivs, k, func(iv interval, k key) int {
		if kk.startsBy(iv, k) {
			return -1
		}
		return 1
	})
	return n
}

// startsBy reports whether iv starts at or before k.
func (kk keyKind) startsBy(iv interval, k key) bool {
	return !iv.hasLo || kk.cmp(iv.lo, k) <= 0
}

// within reports whether iv lies inside one merged interval of s.
func (s *keySet) within(iv interval) bool {
	for _, o := range s.ivs {
		if s.kind.loCmp(o, iv) <= 0 && s.kind.hiCmp(iv, o) <= 0 {
			return true
		}
	}
	return false
}

// subsetOf reports whether s ⊆ t; ok is false when the forms cannot be
// compared (a range set against a finite key list).
func (s *keySet) subsetOf(t *keySet) (sub bool, witness string, ok bool) {
	if !s.ranges {
		for _, k := range s.list {
			if !t.has(k) {
				return false, k.String(), true
			}
		}
		return true, "", true
	}
	if !t.ranges {
		return false, "", false
	}
	for _, iv := range s.ivs {
		if !t.within(iv) {
			return false, s.kind.showInterval(iv), true
		}
	}
	return true, "", true
}

// minus is s \ t, written as a scope ("" when s ⊆ t): what a required
// scope s asks that a certified scope t leaves out.
func (s *keySet) minus(t *keySet) string {
	kk := s.kind
	if !s.ranges {
		out := keySet{kind: kk}
		for _, k := range s.list {
			if !t.has(k) {
				out.list = append(out.list, k)
			}
		}
		if len(out.list) == 0 {
			return ""
		}
		return out.String()
	}
	if !t.ranges {
		if len(s.ivs) == 0 {
			return ""
		}
		return s.String() + " but the keys " + t.String()
	}
	out := s.minusRanges(t)
	if len(out.ivs) == 0 {
		return ""
	}
	return out.String()
}

// minusRanges is s \ t for two range sets.
func (s *keySet) minusRanges(t *keySet) keySet {
	kk := s.kind
	out := keySet{kind: kk, ranges: true}
	for _, iv := range s.ivs {
		cur, left := iv, true // what is left of iv above the intervals of t so far
		for _, o := range t.ivs {
			if o.hasLo && cur.hasHi && kk.cmp(o.lo, cur.hi) >= 0 {
				break // o starts above what is left
			}
			if o.hasHi && cur.hasLo && kk.cmp(o.hi, cur.lo) <= 0 {
				continue // o ends at or below it
			}
			if kk.loCmp(o, cur) > 0 { // a gap below o
				gap := cur
				gap.hi, gap.hasHi = o.lo, true
				out.ivs = append(out.ivs, gap)
			}
			if !o.hasHi || cur.hasHi && kk.cmp(o.hi, cur.hi) >= 0 {
				left = false
				break
			}
			cur.lo, cur.hasLo = o.hi, true
		}
		if left && !kk.empty(cur) {
			out.ivs = append(out.ivs, cur)
		}
	}
	return out
}

// equal reports whether two scopes are the same set, written in one form.
func (s *keySet) equal(t *keySet) (eq bool, witness string) {
	if s.ranges != t.ranges {
		return false, "one is written as keys, the other as ranges"
	}
	if sub, w, _ := s.subsetOf(t); !sub {
		return false, w
	}
	if sub, w, _ := t.subsetOf(s); !sub {
		return false, w
	}
	return true, ""
}

func (kk keyKind) showInterval(iv interval) string {
	s := "["
	if iv.hasLo {
		s += iv.lo.String()
	} else {
		s += "−∞"
	}
	s += ", "
	if iv.hasHi {
		s += iv.hi.String()
	} else {
		s += "+∞"
	}
	return s + ")"
}

func (s *keySet) String() string {
	if !s.ranges {
		out := "{"
		for i, k := range s.list {
			if i > 0 {
				out += ", "
			}
			if i == 8 {
				out += fmt.Sprintf("… %d keys", len(s.list))
				break
			}
			out += k.String()
		}
		return out + "}"
	}
	out := ""
	for i, iv := range s.ivs {
		if i > 0 {
			out += " ∪ "
		}
		out += s.kind.showInterval(iv)
	}
	if out == "" {
		return "∅"
	}
	return out
}

// keyTable holds the per-key states of the scope in an open-addressing
// table keyed by a hash of the key: integer keys hash their number, string
// keys their bytes, so a lookup from a raw JSON key neither allocates nor
// reparses, and costs one cache line before the state itself (the verifier's
// hot path: one lookup per log event).
type keyTable struct {
	kind  keyKind
	seed  maphash.Seed
	slots []slot // linear probing, at most half full
	n     int
	free  []keyState // the rest of the slab alloc hands out from
}

type slot struct {
	h  uint64 // the key's hash; 0 marks an empty slot
	ks *keyState
}

// hugeStates is the least table given huge pages: about 45 MB of states.
const hugeStates = 1 << 18

func newKeyTable(kind keyKind) *keyTable {
	return &keyTable{kind: kind, seed: maphash.MakeSeed(), slots: make([]slot, 1024)}
}

// alloc is a new zero state. Once the table is large, states are cut
// from slabs on huge pages (internal/huge): the checks touch them at
// random, one or two a line, and on 4 KiB pages a table of hundreds of
// megabytes misses the TLB on nearly every touch. A slab holds 64 Ki
// states (about 11 MB). A small table's states are allocated one by one:
// in a small budget, slabs held more memory than their states (a peak of
// 64 to 67 MiB against 61 at --mem 64MiB, TestMemHeld).
func (t *keyTable) alloc() *keyState {
	if t.n < hugeStates {
		return new(keyState)
	}
	if len(t.free) == 0 {
		t.free = huge.Make[keyState](1<<16, 1<<16)
	}
	ks := &t.free[0]
	t.free = t.free[1:]
	return ks
}

func mix(x uint64) uint64 { // splitmix64's finalizer
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31 | 1
}

func (t *keyTable) hash(k key) uint64 {
	if t.kind == kindInteger {
		return mix(uint64(k.n))
	}
	return maphash.String(t.seed, k.s) | 1
}

func (t *keyTable) same(ks *keyState, k key) bool {
	if t.kind == kindInteger {
		return ks.k.n == k.n
	}
	return ks.k.s == k.s
}

func (t *keyTable) get(k key) *keyState {
	h := t.hash(k)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; t.slots[i].h != 0; i = (i + 1) & mask {
		if t.slots[i].h == h && t.same(t.slots[i].ks, k) {
			return t.slots[i].ks
		}
	}
	return nil
}

func (t *keyTable) put(ks *keyState) {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		if n := 2 * len(old); t.n >= hugeStates {
			t.slots = huge.Make[slot](n, n)
		} else {
			t.slots = make([]slot, n)
		}
		for _, s := range old {
			if s.h != 0 {
				t.insert(s)
			}
		}
	}
	t.insert(slot{t.hash(ks.k), ks})
	t.n++
}

func (t *keyTable) insert(s slot) {
	mask := uint64(len(t.slots) - 1)
	i := s.h & mask
	for t.slots[i].h != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = s
}

// clear empties the table, keeping its size (it fills again as before).
// The rest of the last slab goes too: its states, written out, would keep
// their strings.
func (t *keyTable) clear() {
	clear(t.slots)
	t.n, t.free = 0, nil
}

func (t *keyTable) each(f func(*keyState)) {
	for _, s := range t.slots {
		if s.h != 0 {
			f(s.ks)
		}
	}
}

// find looks a raw JSON key up; on a miss it returns the parsed key.
func (t *keyTable) find(raw []byte) (*keyState, key, error) {
	if h, n, inner, ok := t.quick(raw); ok {
		mask := uint64(len(t.slots) - 1)
		for i := h & mask; t.slots[i].h != 0; i = (i + 1) & mask {
			if s := &t.slots[i]; s.h == h {
				if t.kind == kindInteger && s.ks.k.n == n || t.kind == kindString && s.ks.k.s == string(inner) {
					return s.ks, s.ks.k, nil
				}
			}
		}
		if t.kind == kindInteger {
			return nil, key{s: strconv.FormatInt(n, 10), n: n, num: true}, nil
		}
		return nil, key{s: string(inner)}, nil
	}
	k, err := t.kind.parse(raw)
	if err != nil {
		return nil, k, err
	}
	return t.get(k), k, nil
}

// quick is a raw key's hash as the table takes it, without parsing it in
// full: of its number (n) for integer keys, of its inside (inner) for a
// string key without escapes; ok is false when the key must be parsed.
func (t *keyTable) quick(raw []byte) (h uint64, n int64, inner []byte, ok bool) {
	if t.kind == kindInteger {
		digits := raw
		if len(digits) >= 2 && digits[0] == '"' {
			digits = digits[1 : len(digits)-1]
		}
		if n, ok = fastInt(digits); ok {
			h = mix(uint64(n))
		}
		return h, n, nil, ok
	}
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		inner = raw[1 : len(raw)-1]
		return maphash.Bytes(t.seed, inner) | 1, 0, inner, true
	}
	return 0, 0, nil, false
}

func (t *keyTable) slotOf(h uint64) *slot { return &t.slots[h&uint64(len(t.slots)-1)] }

// probe is the state of the first slot with hash h among the few from
// its home slot (nil if none): the key's, but for a collision of hashes
// that find tells apart.
func (t *keyTable) probe(h uint64) *keyState {
	mask := uint64(len(t.slots) - 1)
	for i, n := h&mask, 0; t.slots[i].h != 0 && n < 8; i, n = (i+1)&mask, n+1 {
		if t.slots[i].h == h {
			return t.slots[i].ks
		}
	}
	return nil
}

// fastInt parses a plain decimal integer (no sign but '-', no leading zeros
// beyond "0", at most 18 digits); ok is false for anything else.
func fastInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 || len(b) > 1 && b[0] == '0' {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// meets reports whether two key sets share a key.
func (s *keySet) meets(t *keySet) bool {
	switch {
	case !s.ranges:
		for _, k := range s.list {
			if t.has(k) {
				return true
			}
		}
		return false
	case !t.ranges:
		return t.meets(s)
	}
	for _, a := range s.ivs {
		for _, b := range t.ivs {
			if _, ok := s.kind.clip(a, b); ok {
				return true
			}
		}
	}
	return false
}
