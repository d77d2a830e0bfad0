package certify

import (
	"fmt"
	"slices"
)

// checkO1 checks that the chunk domains partition the scope (O1, §3.3 of the
// main paper; the strict canonical partition of 003 §5.3). Under a
// restriction the domains are read inside K' only. It records a Reject and
// returns only an Unsupported it cannot decide.
func (v *verifier) checkO1() *Failure {
	kk := v.kind
	restricted := v.opt.Restrict != nil
	o1 := func(unit int, k, detail string) {
		v.fail(rO1, &Failure{Obligation: "S4", Clause: "O1 chunk partition: the domains partition the scope", Unit: unit, Key: k, Detail: detail})
	}
	if !v.scope.ranges {
		// A finite scope: every key owned by exactly one domain.
		if !restricted {
			for i := range v.units {
				d := &v.units[i].dom
				if d.ranges {
					continue // keys of a range outside a finite scope are not claimed
				}
				for _, k := range d.list {
					if !v.scope.has(k) {
						o1(i+1, k.String(), "a key of the chunk's domain is outside the scope")
						return nil
					}
				}
			}
		}
		for _, k := range v.scope.list {
			first := -1
			for i := range v.units {
				if !v.units[i].dom.has(k) {
					continue
				}
				if first >= 0 {
					o1(i+1, k.String(), fmt.Sprintf("the key is also owned by unit %d", first+1))
					return nil
				}
				first = i
			}
			if first < 0 {
				o1(0, k.String(), "the key is owned by no chunk")
				return nil
			}
		}
		return nil
	}
	// A range scope: domains must be ranges too.
	var ivs []interval
	for i := range v.units {
		d := &v.units[i].dom
		if !d.ranges {
			return unsupported("domain", "unit %d's domain is a key list under a scope given as ranges", i+1)
		}
		for _, iv := range d.ivs {
			iv.unit = i
			if !restricted && !v.scope.within(iv) {
				o1(i+1, kk.showInterval(iv), "part of the chunk's domain is outside the scope")
				return nil
			}
			for _, s := range v.scope.ivs {
				if c, ok := kk.clip(iv, s); ok {
					ivs = append(ivs, c)
				}
			}
		}
	}
	slices.SortStableFunc(ivs, kk.loCmp)
	for j := 1; j < len(ivs); j++ {
		prev, cur := ivs[j-1], ivs[j]
		if !prev.hasHi || !cur.hasLo || kk.cmp(cur.lo, prev.hi) < 0 {
			k := "−∞"
			if cur.hasLo {
				k = cur.lo.String()
			}
			o1(cur.unit+1, k, fmt.Sprintf("the key is also owned by unit %d", prev.unit+1))
			return nil
		}
	}
	union := keySet{kind: kk, ranges: true, ivs: kk.merge(slices.Clone(ivs))}
	for _, s := range v.scope.ivs {
		if union.within(s) {
			continue
		}
		// the first key of s that no domain holds
		gap, at := s, "−∞"
		if gap.hasLo {
			at = gap.lo.String()
		}
		for _, u := range union.ivs {
			if kk.loCmp(u, gap) <= 0 && (!u.hasHi || !gap.hasLo || kk.cmp(gap.lo, u.hi) < 0) {
				if u.hasHi {
					at = u.hi.String()
				}
				break
			}
		}
		o1(0, at, "the key is owned by no chunk (the domains do not cover the scope)")
		return nil
	}
	return nil
}

// clip intersects two intervals.
func (kk keyKind) clip(a, b interval) (interval, bool) {
	c := a
	if b.hasLo && (!c.hasLo || kk.cmp(b.lo, c.lo) > 0) {
		c.lo, c.hasLo = b.lo, true
	}
	if b.hasHi && (!c.hasHi || kk.cmp(b.hi, c.hi) < 0) {
		c.hi, c.hasHi = b.hi, true
	}
	return c, !kk.empty(c)
}
