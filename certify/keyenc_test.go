package certify

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// randomParts draws a key of the given column kinds (true: integer), with
// the values that stress the encoding: the integer extremes, the empty
// string, NUL, \x01 and \x02 next to ordinary bytes, prefixes of each other.
func randomParts(rng *rand.Rand, kinds []bool) []KeyPart {
	ints := []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, 9, 10, math.MaxInt64 - 1, math.MaxInt64}
	alphabet := []string{"", "\x00", "\x01", "\x02", "a", "b", "é"}
	ps := make([]KeyPart, len(kinds))
	for i, integer := range kinds {
		if integer {
			if rng.IntN(2) == 0 {
				ps[i] = IntPart(ints[rng.IntN(len(ints))])
			} else {
				ps[i] = IntPart(rng.Int64N(40) - 20)
			}
			continue
		}
		var s strings.Builder
		for n := rng.IntN(4); n > 0; n-- {
			s.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		ps[i] = StrPart(s.String())
	}
	return ps
}

func compareParts(a, b []KeyPart) int {
	for i := range a {
		var c int
		if a[i].IsStr {
			c = strings.Compare(a[i].Str, b[i].Str)
		} else {
			c = cmp.Compare(a[i].Int, b[i].Int)
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// EncodeKey preserves the columns' lexicographic order and equality: the
// byte order of two encoded composite keys (the numeric order of one
// integer column) is the order of their parts. Breaking it: writing the
// integers without the 2^63 offset puts -1 above 0; leaving NUL
// unescaped makes ("a\x00", "") and ("a", "\x00…") collide or cross.
func TestEncodeKeyPreservesOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 1))
	for _, kinds := range [][]bool{{true}, {false}, {true, true}, {false, false}, {true, false}, {false, true, false}} {
		for n := 0; n < 4000; n++ {
			a, b := randomParts(rng, kinds), randomParts(rng, kinds)
			as, an, ai := EncodeKey(a)
			bs, bn, bi := EncodeKey(b)
			if ai != (len(kinds) == 1 && kinds[0]) || ai != bi {
				t.Fatalf("%v: integer = %v, %v", kinds, ai, bi)
			}
			got := strings.Compare(as, bs)
			if ai {
				got = cmp.Compare(an, bn)
			}
			if want := compareParts(a, b); got != want {
				t.Fatalf("%v vs %v: encoded %q vs %q compare %d, the parts %d", a, b, as, bs, got, want)
			}
		}
	}
}

// EncodeKey is the Debezium converter's key: the same parts give the same
// bundle key, so a recorder using it and certify --from debezium name a
// row alike.
func TestEncodeKeyIsTheConvertersKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 2))
	for _, kinds := range [][]bool{{true}, {false}, {true, false}, {false, false, true}} {
		for n := 0; n < 500; n++ {
			parts := randomParts(rng, kinds)
			var raw []json.RawMessage
			for _, p := range parts {
				if p.IsStr {
					raw = append(raw, mustJSON(p.Str))
				} else {
					raw = append(raw, mustJSON(p.Int))
				}
			}
			c := &dbzConverter{}
			k, f := c.keyOf(raw)
			if f != nil {
				t.Fatalf("%v: %v", parts, f)
			}
			s, _, integer := EncodeKey(parts)
			if integer {
				if !c.integer || c.keyJSON(k) != s {
					t.Fatalf("%v: EncodeKey %s, the converter %s", parts, s, c.keyJSON(k))
				}
			} else if c.integer || k.s != s {
				t.Fatalf("%v: EncodeKey %q, the converter %q", parts, s, k.s)
			}
		}
	}
}

// minusRanges against membership, key by key, on random range sets over a
// few integers (unbounded ends included).
func TestMinusRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	kk := kindInteger
	randSet := func() keySet {
		var spec ScopeSpec
		spec.Ranges = []RangeSpec{}
		for range rng.IntN(4) {
			var r RangeSpec
			if rng.IntN(4) > 0 {
				r.Ge = json.RawMessage(fmt.Sprint(rng.IntN(10)))
			}
			if rng.IntN(4) > 0 {
				r.Lt = json.RawMessage(fmt.Sprint(rng.IntN(10)))
			}
			spec.Ranges = append(spec.Ranges, r)
		}
		s, err := kk.build(spec, "set")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for range 5000 {
		a, b := randSet(), randSet()
		d := a.minusRanges(&b)
		for n := -2; n <= 12; n++ {
			k := kk.fromString(fmt.Sprint(n))
			if want := a.has(k) && !b.has(k); d.has(k) != want {
				t.Fatalf("%s minus %s = %s: key %d in it %v, want %v", a.String(), b.String(), d.String(), n, d.has(k), want)
			}
		}
		if s := a.minus(&b); (s == "") != (len(d.ivs) == 0) {
			t.Fatalf("minus %q, ranges %s", s, d.String())
		}
	}
}

// parseInt's fast path and fastInt, which the key table and an integer
// key's parse use, read every integer as strconv does and leave to it what
// they cannot read.
func TestParseIntAsStrconv(t *testing.T) {
	for _, s := range []string{"0", "-0", "7", "-7", "007", "+7", "1e3", "1.5", "", "-", "--1", "12a",
		"999999999999999999", "-999999999999999999", "1000000000000000000", "9223372036854775807",
		"-9223372036854775808", "9223372036854775808", "18446744073709551616"} {
		want, werr := strconv.ParseInt(s, 10, 64)
		got, err := parseInt([]byte(s))
		if (err != nil) != (werr != nil) || err == nil && got != want {
			t.Errorf("parseInt(%q) = %d, %v; strconv: %d, %v", s, got, err, want, werr)
		}
		if n, ok := fastInt([]byte(s)); ok && (werr != nil || n != want) {
			t.Errorf("fastInt(%q) = %d; strconv: %d, %v", s, n, want, werr)
		}
		// an integer key, bare and quoted, is its canonical text
		for _, raw := range []string{s, strconv.Quote(s)} {
			k, err := kindInteger.parse([]byte(raw))
			if (err != nil) != (werr != nil) || err == nil && k != (key{s: strconv.FormatInt(want, 10), n: want, num: true}) {
				t.Errorf("parse(%s) = %+v, %v; strconv: %d, %v", raw, k, err, want, werr)
			}
		}
	}
}
