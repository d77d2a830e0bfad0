package protocols

import (
	"context"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

func runComposite(t *testing.T, cfg Config, workers int) *explore.Result[compositeState, compositeAction] {
	t.Helper()
	r, err := explore.Run(context.Background(), explore.Model[compositeState, compositeAction](newComposite(cfg)), explore.Options{Workers: workers})
	if err != nil {
		t.Fatalf("%v: %v", cfg, err)
	}
	return r
}

// compositeSmall is a bound small enough for -race and -short.
func compositeSmall(mode string) Config {
	return Config{Keys: 2, Values: 2, Events: 3, Chunks: 2, Txn: 1, Mode: mode}
}

// compositePaper is the paper's largest bound (§10: three keys, four events,
// two chunks), used where the defaults are too slow for go test.
func compositePaper(mode string) Config {
	return Config{Keys: 3, Values: 2, Events: 4, Chunks: 2, Txn: 1, Mode: mode}
}

// Reference: §4.6 Cor 3, Lemma 4.2 — every invariant holds, and the result
// does not depend on the number of workers.
func TestCompositePasses(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"mixed 1 key", Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: CompositeMixed}},
		{"tablesync 1 key", Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: CompositeTablesync}},
		{"mixed small", compositeSmall(CompositeMixed)},
		{"tablesync small", compositeSmall(CompositeTablesync)},
		{"mixed 3 units", Config{Keys: 3, Values: 1, Events: 3, Chunks: 3, Txn: 1, Mode: CompositeMixed}},
		{"mixed txn 2", Config{Keys: 2, Values: 1, Events: 3, Chunks: 2, Txn: 2, Mode: CompositeMixed}},
		{"tablesync more units than keys", Config{Keys: 2, Values: 1, Events: 2, Chunks: 3, Txn: 1, Mode: CompositeTablesync}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r1 := runComposite(t, tt.cfg, 1)
			if r1.Verdict != explore.Pass {
				t.Fatalf("%v: %v\n%s", tt.cfg, r1.Verdict, compositeViolation(newComposite(tt.cfg), r1))
			}
			r2 := runComposite(t, tt.cfg, 2)
			if r1.Stats.Distinct != r2.Stats.Distinct || r1.Stats.Generated != r2.Stats.Generated || r1.Stats.Depth != r2.Stats.Depth {
				t.Errorf("1 worker: %+v, 2 workers: %+v", r1.Stats, r2.Stats)
			}
		})
	}
}

// Reference: §4.6, §6.2, §6.4 — exact counts, from an enumerator written
// from the paper's description with its own states (no engine, no
// fingerprints).
//
// By hand, tablesync at 1 key / 1 value / 1 event (one point splice): before
// the splice the log is [] or [k0=1], and with [k0=1] the consumer (from
// s0 = 0) may already have taken position 1 (3 states). Splice at r = 0:
// open, open with the commit, closed, closed with the commit, and the consumer
// past position 1 (5). Splice at r = 1 with the consumer at 0 or 1, then the
// close, which re-emits k0=1 tagged 1 (3). 11 states, 12 transitions.
func TestCompositeCounts(t *testing.T) {
	tests := []struct {
		cfg                 Config
		distinct, generated uint64
	}{
		{Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: CompositeMixed}, 29, 35},
		{Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1, Mode: CompositeTablesync}, 11, 12},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeMixed}, 1607, 2720},
		{Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeTablesync}, 373, 608},
		{Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeMixed}, 5999, 10186},
		{Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeTablesync}, 1337, 2196},
		{Config{Keys: 3, Values: 1, Events: 2, Chunks: 3, Txn: 1, Mode: CompositeMixed}, 16947, 33237},
	}
	for _, tt := range tests {
		t.Run(tt.cfg.String(), func(t *testing.T) {
			distinct, generated := bfCompositeCount(tt.cfg)
			t.Logf("brute force: %d distinct, %d transitions", distinct, generated)
			if distinct != tt.distinct || generated != tt.generated {
				t.Errorf("brute force gives %d/%d, the literal says %d/%d", distinct, generated, tt.distinct, tt.generated)
			}
			r := runComposite(t, tt.cfg, 2)
			if r.Verdict != explore.Pass || r.Stats.Distinct != distinct || r.Stats.Generated != generated {
				t.Errorf("engine: %v, %d distinct, %d generated; brute force: %d, %d", r.Verdict, r.Stats.Distinct, r.Stats.Generated, distinct, generated)
			}
		})
	}
}

// Reference: Prop 2, Example 5.1, Def. 6.2 — the shapes the invariants must
// survive are reached.
func TestCompositeSometimes(t *testing.T) {
	for _, mode := range []string{CompositeMixed, CompositeTablesync} {
		t.Run(mode, func(t *testing.T) {
			cfg := compositePaper(mode)
			if testing.Short() || dumpRace {
				cfg = compositeSmall(mode)
			}
			r := runComposite(t, cfg, 2)
			if r.Verdict != explore.Pass {
				t.Fatalf("%v: %v", cfg, r.Verdict)
			}
			if len(r.Sometimes) == 0 {
				t.Fatal("no sometimes properties")
			}
			for _, s := range r.Sometimes {
				if !s.Reached {
					t.Errorf("%v: %s not reached", cfg, s.Name)
				}
			}
			t.Logf("%v: %d distinct, depth %d, %v", cfg, r.Stats.Distinct, r.Stats.Depth, r.Stats.Elapsed)
		})
	}
}

// Reference: Prop 2 and §10 (distinct splice coordinates refute an early
// common onset); S-OBS, §6.4 (consumption must start at or before the
// earliest splice).
func TestCompositeFaults(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		breaks string
		steps  int
	}{
		// Prop 2's shape, checked below: splice chunk 1 at 0; commit k1; splice
		// chunk 2 at 1; close 1; consume 1; close 2.
		{"early-common-onset tablesync", Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeTablesync, Fault: EarlyCommonOnset}, "latest-high-trajectory", 6},
		// record lo 0; commit k0; splice chunk 2 at 1; read chunk 1 at 1;
		// record hi 1; consume 1; close both: claimed from 0, sink_0(k0) = 1.
		{"early-common-onset mixed", Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeMixed, Fault: EarlyCommonOnset}, "latest-high-trajectory", 8},
		// One unit: record lo 0; commit k0; read; record hi 1; the consumer
		// starts at 1, skipping position 1; close: k0 replays ⊥ ≠ σ_1 = 1.
		{"late-start one unit", Config{Keys: 1, Values: 1, Events: 2, Chunks: 1, Txn: 1, Mode: CompositeMixed, Fault: LateStart}, "frontier-replay", 6},
		// With two units the earlier unit's close already shows the loss:
		// splice chunk 2 at 0; commit k1; start at 1; close chunk 2.
		{"late-start two units", Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeMixed, Fault: LateStart}, "closed-unit-cut", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newComposite(tt.cfg)
			r := runComposite(t, tt.cfg, 2)
			if r.Verdict != explore.Violated || r.Violation.Property != tt.breaks {
				t.Fatalf("%v: want %s violated, got %v\n%s", tt.cfg, tt.breaks, r.Verdict, compositeViolation(m, r))
			}
			if got := len(r.Violation.Trace) - 1; got != tt.steps {
				t.Errorf("trace has %d steps, want %d\n%s", got, tt.steps, compositeViolation(m, r))
			}
			t.Logf("%s", compositeViolation(m, r))
		})
	}
}

// Reference: Prop 2 — with two per-table point splices the shortest
// counterexample to an early common onset has the proposition's shape: two
// splices at distinct coordinates, no shared witness, and the trajectory
// claimed from the earlier one fails at a coordinate between them.
func TestCompositeProposition2(t *testing.T) {
	cfg := Config{Keys: 2, Values: 2, Events: 3, Chunks: 2, Txn: 1, Mode: CompositeTablesync, Fault: EarlyCommonOnset}
	m := newComposite(cfg)
	r := runComposite(t, cfg, 2)
	if r.Verdict != explore.Violated || r.Violation.Property != "latest-high-trajectory" {
		t.Fatalf("want latest-high-trajectory violated, got %v", r.Verdict)
	}
	last := r.Violation.Trace[len(r.Violation.Trace)-1].State
	c := &last.Cap
	if c.Plan.N != 2 || c.Plan.Units[0].Lo != c.Plan.Units[0].Hi || c.Plan.Units[1].Lo != c.Plan.Units[1].Hi {
		t.Fatalf("want two point splices, got %+v", c.Plan)
	}
	r0, r1 := c.Plan.Units[0].Lo, c.Plan.Units[1].Lo
	lo, hi := min(r0, r1), max(r0, r1)
	if lo == hi {
		t.Fatalf("the splices share coordinate %d", lo)
	}
	p := c.FinalPlan()
	if w := p.SharedWitnesses(&c.Log); w != 0 {
		t.Errorf("shared witnesses %b, want none", w)
	}
	if m.claim(c) != lo {
		t.Errorf("claimed from %d, want the earlier splice %d", m.claim(c), lo)
	}
	g, k, ok := p.Trajectory(&c.Log, lo, c.Pos)
	if ok || g < lo || g >= hi {
		t.Errorf("trajectory fails at g = %d (ok=%v), want lo %d ⊑ g < hi %d", g, ok, lo, hi)
	}
	// The failing key belongs to the later splice: its refresh stands at g
	// although the source did not yet hold it there.
	if later := c.Plan.Owner(k); c.Plan.Units[later].Lo != hi {
		t.Errorf("failing key %v belongs to the splice at %d, want the later one at %d", k, c.Plan.Units[later].Lo, hi)
	}
	// The latest-high claim itself holds on the same run.
	if _, _, ok := p.Trajectory(&c.Log, c.Plan.LatestHigh(), c.Pos); !ok {
		t.Error("trajectory from the latest high edge fails")
	}
	t.Logf("%s", compositeViolation(m, r))
}

// Reference: §10 — states survive the spilled queue: Decode inverts Encode.
func TestCompositeEncodeDecode(t *testing.T) {
	for _, cfg := range []Config{compositeSmall(CompositeMixed), compositeSmall(CompositeTablesync),
		{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, Mode: CompositeMixed, Fault: LateStart}} {
		m := newComposite(cfg)
		seen := 0
		var walk func(s compositeState, depth int)
		walk = func(s compositeState, depth int) {
			enc := m.Encode(s, nil)
			back, err := m.Decode(enc)
			if err != nil || string(m.Encode(back, nil)) != string(enc) || back != s {
				t.Fatalf("%v: round trip of %x failed: %v", cfg, enc, err)
			}
			if _, err := m.Decode(enc[:len(enc)-1]); err == nil {
				t.Fatalf("%v: short input accepted", cfg)
			}
			seen++
			if depth == 0 {
				return
			}
			for _, a := range m.Actions(s, nil) {
				if t2, ok := m.Next(s, a); ok {
					walk(t2, depth-1)
				}
			}
		}
		walk(m.Init()[0], 6)
		if seen < 100 {
			t.Errorf("%v: only %d states walked", cfg, seen)
		}
	}
}

// Reference: §3.1 — the plan lists units in chunk order whatever order they
// were recorded in, and closed flags move with their units.
func TestCompositeUnitOrder(t *testing.T) {
	m := newComposite(Config{Keys: 3, Values: 1, Events: 2, Chunks: 3, Txn: 1, Mode: CompositeTablesync})
	s := m.Init()[0]
	s = m.splice(s, 2)
	s = m.closeUnit(s, 0) // chunk 3 closes at 0
	s = m.splice(s, 0)
	s = m.splice(s, 1)
	c := &s.Cap
	for i := 0; i < 3; i++ {
		if int(s.Chunk[i]) != i || c.Plan.Units[i].Domain != model.Range(model.Key(i), model.Key(i+1)) {
			t.Fatalf("unit %d holds chunk %d, domain %b", i, s.Chunk[i], c.Plan.Units[i].Domain)
		}
	}
	if c.Closed != 1<<2 {
		t.Errorf("closed = %b, want only chunk 3's unit (bit 2)", c.Closed)
	}
}

func compositeViolation(m *composite, r *explore.Result[compositeState, compositeAction]) string {
	if r.Violation == nil {
		return ""
	}
	var b strings.Builder
	for i, st := range r.Violation.Trace {
		if st.HasAction {
			b.WriteString(m.Describe(r.Violation.Trace[i-1].State, st.Action) + "\n")
		}
	}
	b.WriteString(r.Violation.Property + ": " + r.Violation.Reason)
	return b.String()
}

// ---- An independent enumerator of the composite protocol (§4.6, §6.2, §6.4). ----

// bfComp is a state as the paper describes it: the log; per chunk whether it
// is recorded, its bracket (lo, hi], where its keys were read (latent) and
// whether it has closed; the chunked unit's progress; the consumer's position;
// and the replay of what was emitted with each key's last tag.
type bfComp struct {
	n         int
	key, img  [8]int8
	rec       [4]bool
	lo, hi, v [4]int
	closed    [4]bool
	scan      int // chunk 1 in mode mixed: 0 idle, 1 lo, 2 read, 3 hi
	pos       int
	val, tag  [8]int
}

func (s *bfComp) sigma(c, k int) int {
	v := 0
	for p := 0; p < c; p++ {
		if int(s.key[p]) == k {
			v = int(s.img[p])
		}
	}
	return v
}

func (s *bfComp) touched(k, lo, hi int) bool {
	for p := lo + 1; p <= hi; p++ {
		if int(s.key[p-1]) == k {
			return true
		}
	}
	return false
}

// bfCompositeCount returns the distinct reachable states and the transitions
// taken from them (T = 1, no fault).
func bfCompositeCount(cfg Config) (distinct, transitions uint64) {
	mixed := cfg.Mode != CompositeTablesync
	owner := func(ch, k int) bool { return ch*cfg.Keys/cfg.Chunks <= k && k < (ch+1)*cfg.Keys/cfg.Chunks }
	complete := func(s *bfComp, ch int) bool { return s.rec[ch] && (!mixed || ch > 0 || s.scan == 3) }
	seen := map[bfComp]bool{}
	var visit func(s bfComp)
	visit = func(s bfComp) {
		if seen[s] {
			return
		}
		seen[s] = true
		var next []bfComp
		if s.n < cfg.Events {
			for k := 0; k < cfg.Keys; k++ {
				for v := 0; v <= cfg.Values; v++ {
					if v != s.sigma(s.n, k) {
						t := s
						t.key[t.n], t.img[t.n] = int8(k), int8(v)
						t.n++
						next = append(next, t)
					}
				}
			}
		}
		// Record each chunk not yet recorded: chunk 1's low edge (mixed), or a
		// point splice read at its recorded coordinate.
		for ch := 0; ch < cfg.Chunks; ch++ {
			if s.rec[ch] {
				continue
			}
			t := s
			t.rec[ch], t.lo[ch], t.hi[ch] = true, s.n, s.n
			if mixed && ch == 0 {
				t.scan = 1
			} else {
				t.v[ch] = s.n
			}
			next = append(next, t)
		}
		if s.scan == 1 { // read chunk 1 at one point
			t := s
			t.scan, t.v[0] = 2, s.n
			next = append(next, t)
		}
		if s.scan == 2 { // record chunk 1's high edge
			t := s
			t.scan, t.hi[0] = 3, s.n
			next = append(next, t)
		}
		// A unit closes once the consumer has processed its high edge: its
		// keys read present with no event in (lo, hi], tagged hi.
		blocked := false
		for ch := 0; ch < cfg.Chunks; ch++ {
			if !complete(&s, ch) || s.closed[ch] || s.pos < s.hi[ch] {
				continue
			}
			blocked = true
			t := s
			for k := 0; k < cfg.Keys; k++ {
				if r := s.sigma(s.v[ch], k); owner(ch, k) && r != 0 && !s.touched(k, s.lo[ch], s.hi[ch]) {
					t.val[k], t.tag[k] = r, s.hi[ch]
				}
			}
			t.closed[ch] = true
			next = append(next, t)
		}
		// The consumer takes the next position unless a unit is due to close.
		if s.pos < s.n && !blocked {
			t := s
			t.pos++
			k := t.key[t.pos-1]
			t.val[k], t.tag[k] = int(t.img[t.pos-1]), t.pos
			next = append(next, t)
		}
		transitions += uint64(len(next))
		for _, t := range next {
			visit(t)
		}
	}
	visit(bfComp{})
	return uint64(len(seen)), transitions
}
