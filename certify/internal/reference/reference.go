// Package reference is a deliberately simple verifier of evidence bundles
// (certify/FORMAT.md), written from the definitions of the main paper
// (§2–§6) and of the DBLog study (seed 003, §8–§9) and sharing no code with
// package certify, so that the two can be run against each other. It holds
// the whole bundle in memory, replays σ by brute force over a finite set of
// representative keys, and decides each obligation on its own; it does not
// rank failures (a Reject says only that some obligation fails).
//
// Its domain is smaller than the verifier's: position coordinates only, no
// restriction or continuation, and no JSON escapes. Outside it the answer is
// Skip.
package reference

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Verdict is the reference's answer.
type Verdict int

const (
	Accept Verdict = iota
	Reject
	Unsupported
	Skip // outside the reference's domain
)

func (v Verdict) String() string {
	return [...]string{"Accept", "Reject", "Unsupported", "Skip"}[v]
}

// Result is the answer; Cut maps each present key of the scope (its
// canonical text) to its value at the frontier, on Accept.
type Result struct {
	Verdict Verdict
	Reason  string
	Cut     map[string]string
}

func reject(format string, a ...any) Result {
	return Result{Verdict: Reject, Reason: fmt.Sprintf(format, a...)}
}

func unsupported(format string, a ...any) Result {
	return Result{Verdict: Unsupported, Reason: fmt.Sprintf(format, a...)}
}

type scopeJSON struct {
	Keys   []json.RawMessage `json:"keys"`
	Ranges []struct {
		Ge *json.RawMessage `json:"ge"`
		Gt *json.RawMessage `json:"gt"`
		Lt *json.RawMessage `json:"lt"`
		Le *json.RawMessage `json:"le"`
	} `json:"ranges"`
}

type header struct {
	Format      string  `json:"format"`
	Version     int     `json:"version"`
	Coordinates string  `json:"coordinates"`
	Keys        string  `json:"keys"`
	Base        string  `json:"base"`
	Discipline  string  `json:"discipline"`
	Reads       *string `json:"reads"`
	Certificate struct {
		Scope         scopeJSON `json:"scope"`
		Frontier      int64     `json:"frontier"`
		PrefixEntries *int64    `json:"prefix_entries"`
	} `json:"certificate"`
	Run struct {
		Scope    scopeJSON `json:"scope"`
		Start    int64     `json:"start"`
		Consumed int64     `json:"consumed"`
	} `json:"run"`
	Units []struct {
		Domain scopeJSON        `json:"domain"`
		Lo     *int64           `json:"lo"`
		Hi     *int64           `json:"hi"`
		Low    *json.RawMessage `json:"low"`
		High   *json.RawMessage `json:"high"`
	} `json:"units"`
}

// key is a key's canonical text; for integer keys n is its value.
type key struct {
	s string
	n int64
}

// set is a scope or domain: a finite list, or ranges (each [lo, hi) with
// optional bounds, a gt/le bound made inclusive/exclusive by successor).
type set struct {
	isList bool
	list   map[string]bool
	ivs    []iv
}

type iv struct {
	lo, hi       key
	hasLo, hasHi bool
}

type checker struct {
	ints bool
	// representative keys: every key the bundle names, and the keys at and
	// next to every range bound, so that each region of every range is seen
	univ map[string]key
}

func (c *checker) less(a, b key) bool {
	if c.ints {
		return a.n < b.n
	}
	return a.s < b.s
}

func (c *checker) parseKey(raw json.RawMessage) (key, error) {
	var x any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&x); err != nil {
		return key{}, err
	}
	switch t := x.(type) {
	case string:
		if !c.ints {
			return key{s: t}, nil
		}
		n, err := strconv.ParseInt(t, 10, 64) // "007" is 7
		if err != nil {
			return key{}, errors.New("not an integer key")
		}
		return key{s: strconv.FormatInt(n, 10), n: n}, nil
	case json.Number:
		if !c.ints {
			return key{}, errors.New("a number as a string key")
		}
		n, err := strconv.ParseInt(t.String(), 10, 64)
		if err != nil {
			return key{}, errors.New("not an integer key")
		}
		return key{s: strconv.FormatInt(n, 10), n: n}, nil
	}
	return key{}, errors.New("a key is a string or an integer")
}

func (c *checker) note(k key) { c.univ[k.s] = k }

func (c *checker) noteAround(k key) {
	c.note(k)
	if c.ints {
		if k.n > math.MinInt64 {
			c.note(key{s: strconv.FormatInt(k.n-1, 10), n: k.n - 1})
		}
		if k.n < math.MaxInt64 {
			c.note(key{s: strconv.FormatInt(k.n+1, 10), n: k.n + 1})
		}
		return
	}
	c.note(key{s: k.s + "\x00"})
}

func (c *checker) build(sj scopeJSON) (set, error) {
	switch {
	case sj.Keys != nil && sj.Ranges != nil, sj.Keys == nil && sj.Ranges == nil:
		return set{}, errors.New("a scope gives keys or ranges")
	case sj.Keys != nil:
		s := set{isList: true, list: map[string]bool{}}
		for _, raw := range sj.Keys {
			k, err := c.parseKey(raw)
			if err != nil {
				return s, err
			}
			if s.list[k.s] {
				return s, errors.New("a key listed twice")
			}
			s.list[k.s] = true
			c.note(k)
		}
		return s, nil
	}
	var s set
	for _, r := range sj.Ranges {
		if r.Ge != nil && r.Gt != nil || r.Lt != nil && r.Le != nil {
			return s, errors.New("two bounds on one side")
		}
		var x iv
		for _, b := range []struct {
			raw       *json.RawMessage
			lo, after bool
		}{{r.Ge, true, false}, {r.Gt, true, true}, {r.Lt, false, false}, {r.Le, false, true}} {
			if b.raw == nil {
				continue
			}
			k, err := c.parseKey(*b.raw)
			if err != nil {
				return s, err
			}
			c.noteAround(k)
			if b.after { // the successor: k+1, or k followed by a zero byte
				if c.ints {
					if k.n == math.MaxInt64 {
						return s, errors.New("no key above the largest integer")
					}
					k = key{s: strconv.FormatInt(k.n+1, 10), n: k.n + 1}
				} else {
					k = key{s: k.s + "\x00"}
				}
				c.noteAround(k)
			}
			if b.lo {
				x.lo, x.hasLo = k, true
			} else {
				x.hi, x.hasHi = k, true
			}
		}
		s.ivs = append(s.ivs, x)
	}
	return s, nil
}

func (c *checker) has(s set, k key) bool {
	if s.isList {
		return s.list[k.s]
	}
	for _, x := range s.ivs {
		if (!x.hasLo || !c.less(k, x.lo)) && (!x.hasHi || c.less(k, x.hi)) {
			return true
		}
	}
	return false
}

// members reads a record's members in order; a repeated or case-variant
// name is an error (row values are compared as text, not read).
func members(line []byte) ([]string, map[string]json.RawMessage, error) {
	if !json.Valid(line) {
		return nil, nil, errors.New("not one JSON value")
	}
	d := json.NewDecoder(bytes.NewReader(line))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, errors.New("a record is an object")
	}
	var names []string
	vals := map[string]json.RawMessage{}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, nil, err
		}
		name := t.(string)
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return nil, nil, err
		}
		for _, o := range names {
			if strings.EqualFold(o, name) {
				return nil, nil, errors.New("repeated member name " + name)
			}
		}
		names = append(names, name)
		vals[name] = raw
	}
	return names, vals, nil
}

// headerNames are the names of the header's members at every depth.
var headerNames = []string{"format", "version", "coordinates", "keys", "base", "discipline", "reads",
	"certificate", "run", "units", "scope", "frontier", "prefix_entries", "start", "consumed",
	"domain", "lo", "hi", "low", "high", "ranges", "ge", "gt", "lt", "le"}

// strict walks a JSON value's tokens, refusing repeated names and names
// that are a header name in another case.
func strict(d *json.Decoder) error {
	t, err := d.Token()
	if err != nil {
		return err
	}
	switch t {
	case json.Delim('{'):
		var seen []string
		for d.More() {
			nt, err := d.Token()
			if err != nil {
				return err
			}
			name := nt.(string)
			for _, o := range append(seen, headerNames...) {
				if strings.EqualFold(o, name) && (o != name || len(seen) > 0 && contains(seen, name)) {
					return errors.New("repeated or case-variant member name " + name)
				}
			}
			seen = append(seen, name)
			if err := strict(d); err != nil {
				return err
			}
		}
		_, err = d.Token()
	case json.Delim('['):
		for d.More() {
			if err := strict(d); err != nil {
				return err
			}
		}
		_, err = d.Token()
	}
	return err
}

// value is a value's identity: compact JSON text, "" for null (⊥).
func value(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	if b.String() == "null" {
		return ""
	}
	return b.String()
}

type event struct {
	hasKey bool
	k      key
	v      string
}

type entry struct {
	k   key
	v   string
	tag int64
}

// Verify reads a whole bundle and answers.
func Verify(r io.Reader) Result {
	all, err := io.ReadAll(r)
	if err != nil {
		return Result{Verdict: Skip, Reason: err.Error()}
	}
	if bytes.IndexByte(all, '\\') >= 0 {
		return Result{Verdict: Skip, Reason: "JSON escapes are outside the reference's domain"}
	}
	if !utf8.Valid(all) {
		return reject("not UTF-8")
	}
	var lines [][]byte
	for _, l := range bytes.Split(all, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return reject("no header")
	}
	return verify(lines)
}

func verify(lines [][]byte) Result {
	// The header.
	if err := strict(json.NewDecoder(bytes.NewReader(lines[0]))); err != nil {
		return reject("header: %v", err)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(lines[0], &probe); err != nil {
		return reject("header: %v", err)
	}
	known := map[string]bool{"format": true, "version": true, "coordinates": true, "keys": true, "base": true, "discipline": true,
		"reads": true, "certificate": true, "run": true, "units": true}
	for name := range probe {
		if !known[name] {
			for k := range known {
				if strings.EqualFold(k, name) {
					return reject("case-variant header member %s", name)
				}
			}
		}
	}
	var h header
	var f0 struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if json.Unmarshal(lines[0], &f0) != nil {
		return reject("header")
	}
	if f0.Format != "cutcheck-evidence" || f0.Version != 1 {
		return unsupported("format or version")
	}
	d := json.NewDecoder(bytes.NewReader(lines[0]))
	d.DisallowUnknownFields()
	if err := d.Decode(&h); err != nil {
		if strings.Contains(err.Error(), "unknown field") {
			return unsupported("%v", err)
		}
		return reject("header: %v", err)
	}
	switch h.Coordinates {
	case "position":
	case "executed-set":
		return Result{Verdict: Skip, Reason: "executed-set coordinates"}
	default:
		return unsupported("coordinates")
	}
	c := &checker{ints: h.Keys == "integer", univ: map[string]key{}}
	if h.Keys != "integer" && h.Keys != "string" {
		return unsupported("keys")
	}
	if h.Base != "complete" && h.Base != "from-reads" {
		return unsupported("base")
	}
	wd, rm, ps := h.Discipline == "window-discard", h.Discipline == "range-merge", h.Discipline == "point-splice"
	if !wd && !rm && !ps {
		return unsupported("discipline")
	}
	survivors := false
	if h.Reads != nil {
		switch *h.Reads {
		case "", "all":
		case "survivors":
			if !wd {
				return unsupported("survivor-only reads outside window-discard")
			}
			survivors = true
		default:
			return unsupported("reads")
		}
	}
	cert, err := c.build(h.Certificate.Scope)
	if err != nil {
		return reject("certificate scope: %v", err)
	}
	runScope, err := c.build(h.Run.Scope)
	if err != nil {
		return reject("run scope: %v", err)
	}
	f, s0 := h.Certificate.Frontier, h.Run.Start
	if f < 0 || s0 < 0 || h.Run.Consumed < 0 {
		return reject("negative coordinate")
	}
	if len(h.Units) == 0 {
		return reject("no units")
	}
	type unit struct {
		dom    set
		lo, hi int64
	}
	var units []unit
	for _, u := range h.Units {
		if u.Lo == nil || u.Hi == nil || u.Low != nil || u.High != nil {
			return reject("a unit needs lo and hi")
		}
		dom, err := c.build(u.Domain)
		if err != nil {
			return reject("domain: %v", err)
		}
		if survivors && dom.isList {
			return unsupported("survivor-only reads over a key list")
		}
		if *u.Lo < 0 || *u.Hi < 0 {
			return reject("negative coordinate")
		}
		units = append(units, unit{dom, *u.Lo, *u.Hi})
	}
	if !cert.isList {
		for _, u := range units {
			if u.dom.isList {
				return unsupported("a key-list domain under a range scope")
			}
		}
	}

	// The records.
	base := map[string]string{}
	reads := map[string]string{} // by key, from the owner's... any unit
	readUnit := map[string]int{}
	var log []event
	var outs []entry
	entries := int64(0)
	phase := 0
	for i, line := range lines[1:] {
		names, vals, err := members(line)
		if err != nil {
			return reject("line %d: %v", i+2, err)
		}
		if len(names) == 0 {
			return reject("an empty record")
		}
		allowed := map[string][]string{"base": {"base", "v"}, "read": {"read", "k", "v"}, "p": {"p", "k", "v", "x"}, "out": {"out", "v", "tag"}}
		fields, ok := allowed[names[0]]
		if !ok {
			return unsupported("record kind %s", names[0])
		}
		for _, n := range names {
			if !contains(fields, n) {
				return unsupported("field %s", n)
			}
		}
		integer := func(name string) (int64, bool) {
			n, err := strconv.ParseInt(string(vals[name]), 10, 64)
			return n, err == nil
		}
		switch names[0] {
		case "base":
			if phase > 0 {
				return reject("base after reads or the log")
			}
			if _, ok := vals["v"]; !ok {
				return reject("base without v")
			}
			k, err := c.parseKey(vals["base"])
			if err != nil {
				return reject("%v", err)
			}
			c.note(k)
			if !c.has(cert, k) {
				continue
			}
			if _, dup := base[k.s]; dup {
				return reject("two base observations")
			}
			base[k.s] = value(vals["v"])
		case "read":
			if phase > 1 {
				return reject("a read after the log")
			}
			phase = 1
			n, ok := integer("read")
			if !ok {
				return reject("read: unit")
			}
			if vals["k"] == nil || vals["v"] == nil {
				return reject("a read needs k and v")
			}
			if n < 1 || n > int64(len(units)) {
				return reject("a read names no unit")
			}
			k, err := c.parseKey(vals["k"])
			if err != nil {
				return reject("%v", err)
			}
			c.note(k)
			if !c.has(cert, k) {
				continue
			}
			if !c.has(units[n-1].dom, k) {
				return reject("a read outside its domain")
			}
			if u, dup := readUnit[k.s]; dup {
				if u == int(n) {
					return reject("two reads of one key")
				}
				continue // overlapping domains: O1 fails
			}
			readUnit[k.s], reads[k.s] = int(n), value(vals["v"])
		case "p":
			phase = 2
			n, ok := integer("p")
			if !ok {
				return reject("p")
			}
			if _, ok := vals["x"]; ok {
				if _, ok := integer("x"); !ok {
					return reject("x")
				}
			}
			if n != int64(len(log))+1 {
				return reject("a gap in the log")
			}
			ev := event{}
			if kraw, ok := vals["k"]; ok {
				if vals["v"] == nil {
					return unsupported("an event without its image")
				}
				k, err := c.parseKey(kraw)
				if err != nil {
					return reject("%v", err)
				}
				c.note(k)
				if c.has(cert, k) {
					ev = event{true, k, value(vals["v"])}
				}
			}
			log = append(log, ev)
		case "out":
			phase = 2
			entries++
			tag, ok := integer("tag")
			if vals["v"] == nil || !ok || tag < 0 {
				return reject("an entry needs v and a tag")
			}
			k, err := c.parseKey(vals["out"])
			if err != nil {
				return reject("%v", err)
			}
			c.note(k)
			if c.has(cert, k) {
				outs = append(outs, entry{k, value(vals["v"]), tag})
			}
		}
	}
	n := int64(len(log))

	// The representative keys of the scope, in key order.
	var keys []key
	for _, k := range c.univ {
		if c.has(cert, k) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return c.less(keys[i], keys[j]) })

	var fails []string
	fail := func(format string, a ...any) { fails = append(fails, fmt.Sprintf(format, a...)) }

	// S3: the certificate's accessors are the run's.
	if f != h.Run.Consumed {
		fail("S3 frontier")
	}
	if cert.isList != runScope.isList {
		fail("S3 scope forms")
	}
	for _, k := range c.univ {
		if c.has(cert, k) != c.has(runScope, k) {
			fail("S3 scope differs at %s", k.s)
		}
	}
	if pe := h.Certificate.PrefixEntries; pe != nil && *pe != entries {
		fail("S3 prefix length")
	}
	// S4: brackets, frontier, start.
	for i, u := range units {
		if u.lo > u.hi || u.hi > n {
			fail("unit %d: bracket outside the log", i+1)
		}
		if u.hi > f {
			fail("unit %d: frontier before the high edge", i+1)
		}
		if need := map[bool]int64{true: u.hi, false: u.lo}[rm]; s0 > need {
			fail("unit %d: S-OBS", i+1)
		}
		if ps && u.lo != u.hi {
			fail("unit %d: not a point", i+1)
		}
	}
	if f > n {
		fail("frontier past the log")
	}
	// O1: every key of the scope has exactly one owner; a key-list domain
	// lies inside a finite scope; a range domain inside a range scope.
	owner := map[string]int{}
	for _, k := range keys {
		owner[k.s] = -1
		for i, u := range units {
			if c.has(u.dom, k) {
				if owner[k.s] >= 0 {
					fail("O1: %s owned twice", k.s)
				} else {
					owner[k.s] = i
				}
			}
		}
		if owner[k.s] < 0 {
			fail("O1: %s owned by none", k.s)
		}
	}
	for i, u := range units {
		if u.dom.isList == cert.isList || !cert.isList {
			for _, k := range c.univ {
				if c.has(u.dom, k) && !c.has(cert, k) {
					fail("O1: unit %d reaches outside the scope at %s", i+1, k.s)
				}
			}
		}
	}
	// The source: σ_c(k), from b0 and the log.
	touched := func(k key, lo, hi int64) bool {
		for p := lo + 1; p <= hi && p <= n; p++ {
			if e := log[p-1]; e.hasKey && e.k.s == k.s {
				return true
			}
		}
		return false
	}
	readOf := func(k key) (string, bool) {
		if r, ok := reads[k.s]; ok {
			return r, true
		}
		if i := owner[k.s]; i >= 0 && !units[i].dom.isList {
			if survivors && touched(k, units[i].lo, units[i].hi) {
				return "", false // a discarded read is not recorded
			}
			return "", true // a range read is total: unreturned keys were absent
		}
		return "", false
	}
	b0 := func(k key) string {
		if v, ok := base[k.s]; ok || h.Base == "complete" {
			return v // observed (⊥ for a complete base without a record)
		}
		r, _ := readOf(k)
		return r // unknown base: pinned by the read
	}
	sigma := func(c int64, k key) string {
		v := b0(k)
		for p := int64(1); p <= c && p <= n; p++ {
			if e := log[p-1]; e.hasKey && e.k.s == k.s {
				v = e.v
			}
		}
		return v
	}
	// O3 and O2.
	for _, k := range keys {
		i := owner[k.s]
		if i < 0 {
			continue
		}
		u := units[i]
		if survivors && touched(k, u.lo, u.hi) {
			continue // a discarded read: not evidenced (003 §5.4)
		}
		r, ok := readOf(k)
		if !ok {
			fail("O3: %s has no read", k.s)
			continue
		}
		match := false
		for cc := u.lo; cc <= u.hi && cc <= n; cc++ {
			match = match || sigma(cc, k) == r
		}
		if !match && u.hi <= n {
			fail("O2: %s", k.s)
		}
	}
	// The discipline's emission over (s0, f] (main §6.1): a unit closes
	// just before the first consumed event past its high edge, or at the
	// end, emitting its close entries in key order tagged hi.
	var want []entry
	closed := make([]bool, len(units))
	closeUpTo := func(pos int64) {
		for i, u := range units {
			if closed[i] || u.hi >= pos {
				continue
			}
			closed[i] = true
			for _, k := range keys {
				if owner[k.s] != i {
					continue
				}
				var v string
				if rm { // M_i(k): the last window event, else the read
					v, _ = readOf(k)
					for p := u.lo + 1; p <= u.hi && p <= n; p++ {
						if e := log[p-1]; e.hasKey && e.k.s == k.s {
							v = e.v
						}
					}
				} else if touched(k, u.lo, u.hi) {
					continue // discarded
				} else {
					v, _ = readOf(k)
				}
				if v != "" {
					want = append(want, entry{k, v, u.hi})
				}
			}
		}
	}
	for pos := s0 + 1; pos <= f && pos <= n; pos++ {
		closeUpTo(pos)
		e := log[pos-1]
		if !e.hasKey {
			continue
		}
		if i := owner[e.k.s]; rm && i >= 0 && pos <= units[i].hi {
			continue // range-merge withholds a unit's events through its high edge
		}
		want = append(want, entry{e.k, e.v, pos})
	}
	closeUpTo(f + 1)
	if rm { // per key (Lemma 6.3)
		perKey := func(es []entry) map[string][]entry {
			m := map[string][]entry{}
			for _, e := range es {
				m[e.k.s] = append(m[e.k.s], e)
			}
			return m
		}
		w, g := perKey(want), perKey(outs)
		for _, k := range keys {
			if fmt.Sprint(w[k.s]) != fmt.Sprint(g[k.s]) {
				fail("the prefix at %s is not the range-merge emission", k.s)
			}
		}
		for ks := range g {
			if _, ok := w[ks]; !ok {
				fail("the prefix has %s, the emission does not", ks)
			}
		}
	} else if fmt.Sprint(want) != fmt.Sprint(outs) {
		fail("the prefix is not the %s emission", h.Discipline)
	}
	// Per-key monotonicity and the virtual cut.
	last := map[string]int64{}
	replay := map[string]string{}
	for _, e := range outs {
		if t, ok := last[e.k.s]; ok && e.tag < t {
			fail("monotonicity at %s", e.k.s)
		}
		last[e.k.s] = e.tag
		replay[e.k.s] = e.v
	}
	cut := map[string]string{}
	for _, k := range keys {
		if replay[k.s] != sigma(f, k) {
			fail("VC at %s", k.s)
		}
		if replay[k.s] != "" {
			cut[k.s] = replay[k.s]
		}
	}
	if len(fails) > 0 {
		return Result{Verdict: Reject, Reason: strings.Join(fails, "; ")}
	}
	return Result{Verdict: Accept, Cut: cut}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
