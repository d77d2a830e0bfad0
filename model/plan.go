package model

import "fmt"

// Unit is one unit of a capture plan (Def. 3.1): a domain, a bracket (Lo, Hi)
// and a refresh R: Domain → V ∪ {⊥}. Read records which keys have a read
// result at all, so that O3 (totality) can fail.
type Unit struct {
	Domain  KeySet
	Lo, Hi  Coord
	Refresh Store // R(k) for k in Domain
	Read    KeySet
}

// Window is the unit's window (lo, hi].
func (u *Unit) Window() Window { return Window{u.Lo, u.Hi} }

// Present is the keys the unit read present (a read result, not ⊥): the
// rows its copy holds, which a window-discard buffer keeps (Def. 6.2).
func (u *Unit) Present() KeySet {
	var s KeySet
	for r := u.Read & (1<<MaxKeys - 1); r != 0; r &= r - 1 {
		if k := r.Lowest(); u.Refresh[k] != Absent {
			s = s.With(k)
		}
	}
	return s
}

// Plan is a capture plan for scope {0..Keys-1} at a frontier (Def. 3.1).
type Plan struct {
	Keys     uint8
	N        uint8
	Units    [MaxUnits]Unit
	Frontier Coord
}

// Add appends a unit and returns its index.
func (p *Plan) Add(u Unit) int {
	p.Units[p.N] = u
	p.N++
	return int(p.N) - 1
}

// Scope is the set of scoped keys.
func (p *Plan) Scope() KeySet { return Range(0, Key(p.Keys)) }

// Owner is the index of the first unit whose domain holds k, or -1.
func (p *Plan) Owner(k Key) int {
	for i := 0; i < int(p.N); i++ {
		if p.Units[i].Domain.Has(k) {
			return i
		}
	}
	return -1
}

// Failure says which obligation fails, where and why.
type Failure struct {
	Obligation string // "O1", "O2", "O3" or "bracket"
	Unit       int    // index in the plan; -1 when no unit is at fault (a key owned by none)
	Key        Key    // NoKey when the failure is not about one key
	Reason     string
}

func (f *Failure) Error() string {
	where := ""
	if f.Unit >= 0 {
		where = fmt.Sprintf(" unit %d", f.Unit+1) // units are numbered from 1 in messages
	}
	if f.Key != NoKey {
		where += " key " + f.Key.String()
	}
	return f.Obligation + where + ": " + f.Reason
}

// CheckBrackets checks lo ⊑ hi ⊑ f for every unit (Def. 3.1).
func (p *Plan) CheckBrackets() error { return p.checkBrackets(all, p.Frontier, &Log{}) }

// checkBrackets names positions as l does (Log.Offset).
func (p *Plan) checkBrackets(units uint8, f Coord, l *Log) error {
	for i := 0; i < int(p.N); i++ {
		u := &p.Units[i]
		if units&(1<<i) != 0 && (u.Lo > u.Hi || u.Hi > f) {
			return &Failure{"bracket", i, NoKey, fmt.Sprintf("bracket %d..%d not within frontier %d", l.Offset(u.Lo), l.Offset(u.Hi), l.Offset(f))}
		}
	}
	return nil
}

// all selects every unit of a plan.
const all = 1<<MaxUnits - 1

// CheckO1 checks that the domains partition the scope (coverage, §3.3).
func (p *Plan) CheckO1() error {
	var seen KeySet
	for i := 0; i < int(p.N); i++ {
		d := p.Units[i].Domain
		if extra := d &^ p.Scope(); extra != 0 {
			return &Failure{"O1", i, extra.Lowest(), "key outside the scope"}
		}
		if both := seen & d; both != 0 {
			k := both.Lowest()
			return &Failure{"O1", i, k, fmt.Sprintf("key also owned by unit %d", p.Owner(k)+1)}
		}
		seen |= d
	}
	if missing := p.Scope() &^ seen; missing != 0 {
		return &Failure{"O1", -1, missing.Lowest(), "key owned by no unit"}
	}
	return nil
}

// CheckO3 checks that every refresh is total on its domain (§3.3).
func (p *Plan) CheckO3() error { return p.checkO3(all) }

func (p *Plan) checkO3(units uint8) error {
	for i := 0; i < int(p.N); i++ {
		u := &p.Units[i]
		if missing := u.Domain &^ u.Read; units&(1<<i) != 0 && missing != 0 {
			return &Failure{"O3", i, missing.Lowest(), "no read result"}
		}
	}
	return nil
}

// CheckO2 checks bracket-local validity: for every unit and key of its domain
// some c with lo ⊑ c ⊑ hi has R(k) = σ_c(k) — per key, not one shared c (§3.3).
func (p *Plan) CheckO2(l *Log) error { return p.checkO2(all, l) }

func (p *Plan) checkO2(units uint8, l *Log) error {
	for i := 0; i < int(p.N); i++ {
		u := &p.Units[i]
		if units&(1<<i) == 0 {
			continue
		}
		if k := u.unmatched(l); k != NoKey {
			return &Failure{"O2", i, k, fmt.Sprintf("read %v matches σ_c(%v) at no c in [%d, %d]", u.Refresh[k], k, l.Offset(u.Lo), l.Offset(u.Hi))}
		}
	}
	return nil
}

// CheckUnits checks the brackets (against frontier f), then O3, then O2 of
// the units whose bit is set in units, as Check would on a plan of those
// units alone, but in place: a failure names the unit's index in p.
func (p *Plan) CheckUnits(units uint8, l *Log, f Coord) error {
	if err := p.checkBrackets(units, f, l); err != nil {
		return err
	}
	if err := p.checkO3(units); err != nil {
		return err
	}
	return p.checkO2(units, l)
}

// unmatched is the lowest key read in u's domain whose read is σ_c at no c
// in [lo, hi] (ValidIn fails), or NoKey. σ_c(k) changes only at k's events,
// so one walk of the log up to hi decides every key: back from lo to find
// σ_lo, then on through (lo, hi] for the images of k's events.
func (u *Unit) unmatched(l *Log) Key {
	left := u.Domain & u.Read & (1<<MaxKeys - 1)
	unknown := left // keys whose σ_lo is still to be found
	for p := min(u.Lo, l.Len()); p >= 1 && unknown != 0; p-- {
		if e := l.Ev[p-1]; unknown.Has(e.Key) {
			unknown = unknown.Without(e.Key)
			if e.Img == u.Refresh[e.Key] {
				left = left.Without(e.Key)
			}
		}
	}
	for ; unknown != 0; unknown &= unknown - 1 {
		if k := unknown.Lowest(); l.Init[k] == u.Refresh[k] {
			left = left.Without(k)
		}
	}
	for c := u.Lo + 1; c <= min(u.Hi, l.Len()) && left != 0; c++ {
		if e := l.Ev[c-1]; left.Has(e.Key) && e.Img == u.Refresh[e.Key] {
			left = left.Without(e.Key)
		}
	}
	return left.Lowest()
}

// ValidIn reports whether v = σ_c(k) for some c in [lo, hi].
func ValidIn(l *Log, k Key, v Value, lo, hi Coord) bool {
	cur := l.Sigma(lo, k)
	if cur == v {
		return true
	}
	for c := lo + 1; c <= hi; c++ {
		if e := l.At(c); e.Key == k {
			cur = e.Img
			if cur == v {
				return true
			}
		}
	}
	return false
}

// Check runs every obligation the model can decide: brackets, O1, O3, O2.
// (O4 and O5 are assumptions about provenance and encoding, §3.3.)
func (p *Plan) Check(l *Log) error {
	for _, f := range [...]func() error{p.CheckBrackets, p.CheckO1, p.CheckO3} {
		if err := f(); err != nil {
			return err
		}
	}
	return p.CheckO2(l)
}

// Sink is the canonical replay at g (Def. 4.1): the image of the last event
// for k in (lo_i, g] of k's unit i, else R_i(k). Keys owned by no unit are Absent.
func (p *Plan) Sink(l *Log, g Coord, k Key) Value {
	i := p.Owner(k)
	if i < 0 {
		return Absent
	}
	u := &p.Units[i]
	if g > u.Lo {
		if v, _, ok := l.Last(k, Window{u.Lo, g}); ok {
			return v
		}
	}
	return u.Refresh[k]
}

// SinkState is sink_g over the scope.
func (p *Plan) SinkState(l *Log, g Coord) Store {
	var s Store
	for k := Key(0); k < Key(p.Keys); k++ {
		s[k] = p.Sink(l, g, k)
	}
	return s
}

// LatestHigh is the largest recorded high edge (Lemma 4.2); 0 for an empty plan.
func (p *Plan) LatestHigh() Coord {
	var h Coord
	for i := 0; i < int(p.N); i++ {
		h = max(h, p.Units[i].Hi)
	}
	return h
}

// CoordSet is a set of coordinates (bit c = coordinate c).
type CoordSet uint64

// Has reports whether c is in the set.
func (s CoordSet) Has(c Coord) bool { return s&(1<<c) != 0 }

// SharedWitnesses is every c* that lies in every unit's bracket and agrees with
// every refresh: R_i(k) = σ_c*(k) for all units i and keys k ∈ D_i (Cor. 1).
func (p *Plan) SharedWitnesses(l *Log) CoordSet {
	var s CoordSet
	for c := Coord(0); c <= l.Len(); c++ {
		if p.witness(l, c) {
			s |= 1 << c
		}
	}
	return s
}

func (p *Plan) witness(l *Log, c Coord) bool {
	for i := 0; i < int(p.N); i++ {
		u := &p.Units[i]
		if c < u.Lo || c > u.Hi {
			return false
		}
		for k := range u.Domain.Keys() {
			if u.Refresh[k] != l.Sigma(c, k) {
				return false
			}
		}
	}
	return true
}

// Trajectory checks sink_g = σ_g for every g in [from, to] and returns the
// first coordinate and key where they differ (ok=false), as Lemma 4.2 and
// Cor. 1 claim they never do from the latest high or a shared witness.
func (p *Plan) Trajectory(l *Log, from, to Coord) (g Coord, k Key, ok bool) {
	if from > to {
		return 0, NoKey, true
	}
	// sink_g and σ_g, one event at a time in a single pass from the
	// start: the event at g sets σ_g(k) for its key k, and sink_g(k) too
	// when g is past lo of k's unit (it is then the last event for k in
	// (lo, g]). Keys outside the scope stay zero in both, so the stores
	// compare as a whole.
	var sink, sigma Store
	var low [MaxKeys]Coord // lo of each scoped key's unit; keys of none take no event
	for k := Key(0); k < Key(p.Keys); k++ {
		sigma[k], low[k] = l.Init[k], l.Len()
		if i := p.Owner(k); i >= 0 {
			sink[k], low[k] = p.Units[i].Refresh[k], p.Units[i].Lo
		}
	}
	apply := func(g Coord) {
		if e := l.Ev[g-1]; e.Key < Key(p.Keys) {
			sigma[e.Key] = e.Img
			if g > low[e.Key] {
				sink[e.Key] = e.Img
			}
		}
	}
	for g := Coord(1); g <= min(from, l.Len()); g++ {
		apply(g)
	}
	for g := from; ; g++ {
		if g > from && g <= l.Len() {
			apply(g)
		}
		if sink != sigma {
			for k := Key(0); ; k++ {
				if sink[k] != sigma[k] {
					return g, k, false
				}
			}
		}
		if g == to {
			return 0, NoKey, true
		}
	}
}
