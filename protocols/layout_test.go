package protocols

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

// walk returns n states of m met on random walks from its initial states.
func walk[S, A any](m explore.Machine[S, A], n int) []S {
	r := rand.New(rand.NewPCG(1, 2))
	init := m.Init()
	var out []S
	var acts []A
	s := init[0]
	for len(out) < n {
		acts = m.Actions(&s, acts[:0])
		moved := false
		for _, i := range r.Perm(len(acts)) {
			t := s
			if m.Next(&s, acts[i], &t) {
				s, moved = t, true
				break
			}
		}
		if !moved {
			s = init[r.IntN(len(init))]
			continue
		}
		out = append(out, s)
	}
	return out
}

// rawBytes is the memory of *s, padding included.
func rawBytes[S any](s *S) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(s)), unsafe.Sizeof(*s))
}

// layoutCase is one protocol's model at a configuration, with its states
// round-tripped through its Layout and benchmarked.
type layoutCase struct {
	name  string
	check func(t *testing.T)
	bench func(b *testing.B)
}

func layoutCaseOf[S, A comparable](name string, m explore.Machine[S, A], l *Layout[S], clear func(*S)) layoutCase {
	states := walk(m, 4096)
	return layoutCase{name,
		func(t *testing.T) {
			var buf []byte
			for _, s := range states {
				buf = l.Encode(&s, buf[:0])
				var back S
				if err := l.Decode(buf, &back); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				clear(&s)
				if back != s {
					t.Fatalf("%s: round trip: got %+v, want %+v", name, back, s)
				}
				// Nor is a byte written that is not the state's: padding
				// stays as the walk left it, zero.
				if !bytes.Equal(rawBytes(&back), rawBytes(&s)) {
					t.Fatalf("%s: decoding wrote past the fields declared", name)
				}
				if err := l.Decode(buf[:len(buf)-1], &back); err == nil {
					t.Fatalf("%s: a short encoding decoded", name)
				}
				if err := l.Decode(append(buf, 0), &back); err == nil {
					t.Fatalf("%s: a long encoding decoded", name)
				}
				c := l.Canonical(&s)
				if cc := l.Canonical(&c); cc != c {
					t.Fatalf("%s: the canonical form is not its own", name)
				}
			}
		},
		func(b *testing.B) {
			var buf []byte
			var back, zero S
			enc, dec := l.Encode, l.Decode
			for b.Loop() {
				for i := range states {
					buf = enc(&states[i], buf[:0])
					back = zero
					if err := dec(buf, &back); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(states)), "ns/state")
		}}
}

func layoutCases() []layoutCase {
	cfg := Config{Keys: 3, Values: 2, Events: 4, Chunks: 2, Txn: 1}
	cl := newClassic(cfg).(*classic)
	rcfg := cfg
	rcfg.Txn = 2
	ro := newReadonly(rcfg).(*readonly)
	rcfg.Fault = SplitTransaction
	ros := newReadonly(rcfg).(*readonly)
	pcfg := Config{Keys: 3, Values: 3, Events: 3, Chunks: 2, Txn: 2}
	pa := newParallel(pcfg, ParallelParts{})
	pcfg.Fault = BackfillFromRead
	pab := newParallel(pcfg, ParallelParts{})
	dcfg := Config{Keys: 3, Values: 2, Events: 4, Chunks: 1, Txn: 1, Mode: DumpUncertain}
	du := newDump(dcfg)
	ccfg := Config{Keys: 3, Values: 2, Events: 4, Chunks: 2, Txn: 1, Mode: "mixed"}
	co := newComposite(ccfg)
	return []layoutCase{
		layoutCaseOf("classic", cl, cl.Layout, func(s *classicState) { s.Cap.Dup, s.Cap.Inexact = 0, 0 }),
		layoutCaseOf("readonly", ro, ro.Layout, func(s *readonlyState) { s.Cap.Dup, s.Cap.Inexact = 0, 0 }),
		layoutCaseOf("readonly-split", ros, ros.Layout, func(s *readonlyState) { s.Cap.Dup, s.Cap.Inexact = 0, 0 }),
		layoutCaseOf("parallel", pa, pa.Layout, func(s *parallelState) { s.Cap.Dup, s.Cap.Inexact = 0, 0 }),
		layoutCaseOf("parallel-backfill", pab, pab.Layout, func(s *parallelState) { s.Cap.Dup, s.Cap.Inexact = 0, 0 }),
		layoutCaseOf("dump", du, du.Layout, func(s *dumpState) { s.Cap.Dup, s.Cap.Inexact = 0, 0 }),
		layoutCaseOf("composite", co, co.Layout, func(s *compositeState) { s.Cap.Dup, s.Cap.Inexact = 0, 0 }),
	}
}

// Every shipped protocol's states round-trip through its Layout, a short
// encoding is refused, and a canonical form is its own.
func TestLayout(t *testing.T) {
	for _, c := range layoutCases() {
		c.check(t)
	}
}

// A declaration that does not fit its state is refused when made: a field
// declared twice, and a state holding a pointer (a word's write puts back
// the bytes beside it).
func TestLayoutRefuses(t *testing.T) {
	type withPtr struct {
		Cap   model.Capture
		Phase uint8
		P     *int
	}
	for name, f := range map[string]func(){
		"twice":   func() { NewLayout[classicState](3, Keys("Buf"), Keys("Buf")) },
		"pointer": func() { NewLayout[withPtr](3, Bytes("Phase")) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: declared without a panic", name)
				}
			}()
			f()
		}()
	}
}

// BenchmarkLayout encodes and decodes states met on random walks of each
// shipped protocol at BenchmarkProtocols' bounds.
func BenchmarkLayout(b *testing.B) {
	for _, c := range layoutCases() {
		b.Run(c.name, c.bench)
	}
}
