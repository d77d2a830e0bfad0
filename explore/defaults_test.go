package explore

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// walk is a Machine and nothing more: two coordinates 0..n-1, moved right
// or up. Its state is a fixed-size value, so the default codec applies;
// actions are described with %v and counted under one kind, "step".
type walk struct{ n uint8 }

type walkState struct{ X, Y uint8 }

type move uint8

func (m move) String() string { return [...]string{"right", "up"}[m] }

func (w walk) Init() []walkState { return []walkState{{}} }
func (w walk) Actions(s *walkState, buf []move) []move {
	if s.X+1 < w.n {
		buf = append(buf, 0)
	}
	if s.Y+1 < w.n {
		buf = append(buf, 1)
	}
	return buf
}
func (w walk) Next(s *walkState, a move, t *walkState) bool {
	if a == 0 {
		t.X++
	} else {
		t.Y++
	}
	return true
}
func (w walk) Properties() []Property[walkState, move] {
	return []Property[walkState, move]{{Name: "not-corner", Kind: Always, Check: func(s *walkState) string {
		if s.X == w.n-1 && s.Y == w.n-1 {
			return "in the far corner"
		}
		return ""
	}}}
}

// walkEnc has its own Encode (one byte per coordinate) and no Decode: it
// is identified by its Encode and queued with the default codec.
type walkEnc struct{ walk }

func (walkEnc) Encode(s *walkState, buf []byte) []byte { return append(buf, s.X, s.Y) }

// An n×n grid has n² states and 2n(n-1) steps; the far corner lies at
// depth 2(n-1), first reached by right…right up…up.
func TestDefaults(t *testing.T) {
	for _, m := range []Machine[walkState, move]{walk{n: 4}, walkEnc{walk{n: 4}}} {
		for _, opts := range []Options{{Workers: 1}, {Workers: 2, ForceDisk: true, MemBudget: 1}} {
			r, err := Run(context.Background(), m, opts)
			if err != nil {
				t.Fatal(err)
			}
			mustViolate(t, r, "not-corner", []walkState{{0, 0}, {1, 0}, {2, 0}, {3, 0}, {3, 1}, {3, 2}, {3, 3}})
			if r.Stats.Distinct != 15 || len(r.Coverage) != 1 || r.Coverage[0].Name != "step" {
				t.Fatalf("distinct %d coverage %v", r.Stats.Distinct, r.Coverage)
			}
			text := NewReport(m, r).Violation.Text(false)
			if !strings.Contains(text, "step 1: right\n") || !strings.Contains(text, "step 6: up\n") {
				t.Fatalf("trace:\n%s", text)
			}
		}
		r, err := Run(context.Background(), Machine[walkState, move](noProps[walkState, move]{m}), Options{})
		if err != nil || r.Stats.Distinct != 16 || r.Stats.Generated != 24 {
			t.Fatalf("%v %+v", err, r.Stats)
		}
	}
}

type noProps[S, A any] struct{ Machine[S, A] }

func (noProps[S, A]) Properties() []Property[S, A] { return nil }

// intMachine's state is an int, which has no fixed size: it needs a codec.
type intMachine struct{}

func (intMachine) Init() []int                      { return []int{0} }
func (intMachine) Actions(s *int, buf []int) []int  { return buf }
func (intMachine) Next(s *int, a int, t *int) bool  { return false }
func (intMachine) Properties() []Property[int, int] { return nil }

type hidden struct{ x uint8 }

type hiddenMachine struct{}

func (hiddenMachine) Init() []hidden                        { return []hidden{{}} }
func (hiddenMachine) Actions(s *hidden, buf []int) []int    { return buf }
func (hiddenMachine) Next(s *hidden, a int, t *hidden) bool { return false }
func (hiddenMachine) Properties() []Property[hidden, int]   { return nil }
func (hiddenMachine) Encode(s *hidden, buf []byte) []byte   { return append(buf, s.x) }
func (hiddenMachine) Decode(b []byte, s *hidden) error {
	if len(b) != 1 {
		return errors.New("hidden: bad encoding")
	}
	*s = hidden{b[0]}
	return nil
}
func (hiddenMachine) Describe(s *hidden, a int) string { return "" }
func (hiddenMachine) ActionNames() []string            { return nil }
func (hiddenMachine) ActionKind(a int) int             { return 0 }

type hiddenNoCodec struct{}

func (hiddenNoCodec) Init() []hidden                        { return []hidden{{}} }
func (hiddenNoCodec) Actions(s *hidden, buf []int) []int    { return buf }
func (hiddenNoCodec) Next(s *hidden, a int, t *hidden) bool { return false }
func (hiddenNoCodec) Properties() []Property[hidden, int]   { return nil }

// Without Encode and Decode, a state type the default codec cannot handle
// is an error naming the type, not a failure mid-run.
func TestDefaultCodecRefuses(t *testing.T) {
	if _, err := Run(context.Background(), Machine[int, int](intMachine{}), Options{}); err == nil || !strings.Contains(err.Error(), "int is not a fixed-size value") {
		t.Errorf("int state: %v", err)
	}
	if _, err := newBinaryCodec[[]uint8](); err == nil {
		t.Error("a slice state passed as fixed-size")
	}
	if _, err := Run(context.Background(), Machine[hidden, int](hiddenNoCodec{}), Options{}); err == nil || !strings.Contains(err.Error(), "cannot decode") {
		t.Errorf("unexported field: %v", err)
	}
	if _, err := Run(context.Background(), Machine[hidden, int](hiddenMachine{}), Options{NoDeadlock: true}); err != nil {
		t.Errorf("with a codec: %v", err)
	}
}

// The memory codec applies exactly to the types whose memory is their
// encoding/binary encoding, and writes the same bytes.
func TestMemCodec(t *testing.T) {
	type padded struct {
		A uint8
		B uint32
	}
	type nested struct {
		P [2]benchPacked
		F float32
		W [2]walkState
	}
	if _, ok := newMemCodec[padded](); ok {
		t.Error("a padded struct qualified")
	}
	if _, ok := newMemCodec[hidden](); ok {
		t.Error("an unexported field qualified")
	}
	if _, ok := newMemCodec[[2]int](); ok {
		t.Error("int qualified")
	}
	mc, ok := newMemCodec[nested]()
	if !ok {
		t.Fatal("a packed struct did not qualify")
	}
	s := nested{P: [2]benchPacked{{Count: 1 << 30, Flag: [4]bool{true}}, {PC: [4]uint8{9}}}, F: -2.5, W: [2]walkState{{3, 4}, {5, 6}}}
	enc := mc.Encode(&s, []byte{7})
	if want := (binaryCodec[nested]{}).Encode(&s, []byte{7}); string(enc) != string(want) {
		t.Fatalf("memory %x, binary %x", enc, want)
	}
	var got nested
	if err := mc.Decode(enc[1:], &got); err != nil || got != s {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	if err := mc.Decode(enc, new(nested)); err == nil {
		t.Error("a long encoding decoded")
	}
}
