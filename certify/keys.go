package certify

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
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
	s string // canonical text: the string itself, or the decimal integer
	n int64  // the integer, for kindInteger
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
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return key{}, fmt.Errorf("key %s is not an integer (the bundle declares integer keys)", raw)
	}
	return key{s: strconv.FormatInt(n, 10), n: n}, nil
}

// fromString rebuilds a key from its canonical text.
func (kk keyKind) fromString(s string) key {
	if kk == kindInteger {
		n, _ := strconv.ParseInt(s, 10, 64)
		return key{s: s, n: n}
	}
	return key{s: s}
}

func (kk keyKind) cmp(a, b key) int {
	if kk == kindInteger {
		switch {
		case a.n < b.n:
			return -1
		case a.n > b.n:
			return 1
		}
		return 0
	}
	switch {
	case a.s < b.s:
		return -1
	case a.s > b.s:
		return 1
	}
	return 0
}

// succ is the least key above k: k+1, or k followed by a zero byte.
func (kk keyKind) succ(k key) (key, bool) {
	if kk == kindInteger {
		if k.n == math.MaxInt64 {
			return key{}, false
		}
		return key{s: strconv.FormatInt(k.n+1, 10), n: k.n + 1}, true
	}
	return key{s: k.s + "\x00"}, true
}

func (k key) String() string { return strconv.Quote(k.s) }

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
	ivs := s.ivs
	// the last interval whose low bound is at or below k
	i, _ := slices.BinarySearchFunc(ivs, k, func(iv interval, k key) int {
		if !iv.hasLo || s.kind.cmp(iv.lo, k) <= 0 {
			return -1
		}
		return 1
	})
	return i > 0 && s.kind.contains(ivs[i-1], k)
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
