package protocols

import (
	"testing"

	"github.com/cutcheck/cutcheck/model"
)

// The machine codec round-trips a state with padding, unexported and
// nested fields, and a state that is the capture alone, leaves out the
// capture's step marks, and refuses a field of no fixed size.
func TestMachineCodec(t *testing.T) {
	type inner struct {
		A uint8
		B uint16
	}
	type state struct {
		X   uint8
		Cap model.Capture
		set model.KeySet
		Ok  bool
		Arr [3]inner
		_   uint8
	}
	c, ok := newMachineCodec[state]()
	if !ok {
		t.Fatal("no codec for a fixed-size state")
	}
	s := state{X: 7, set: 0x102, Ok: true, Arr: [3]inner{{1, 0x203}, {4, 5}, {6, 0x708}}}
	s.Cap.Plan.Keys = 2
	s.Cap.Log.Commit(model.Event{Key: 1, Img: 2})
	s.Cap.Pos, s.Cap.Dup = 1, 1
	var back state
	if err := c.Decode(c.Encode(&s, nil), &back); err != nil {
		t.Fatal(err)
	}
	want := s
	want.Cap.Dup = 0 // a mark of the step, not part of the state
	if back != want {
		t.Errorf("round trip: got %+v, want %+v", back, want)
	}
	if err := c.Decode(c.Encode(&s, nil)[1:], &back); err == nil {
		t.Error("a short encoding decoded")
	}
	type loose struct {
		Cap model.Capture
		N   int
	}
	if _, ok := newMachineCodec[loose](); ok {
		t.Error("a codec for a state with an int")
	}
	cc, ok := newMachineCodec[model.Capture]()
	if !ok {
		t.Fatal("no codec for a state that is the capture alone")
	}
	var cback model.Capture
	if err := cc.Decode(cc.Encode(&s.Cap, nil), &cback); err != nil || cback != want.Cap {
		t.Errorf("the capture alone: %v, got %+v, want %+v", err, cback, want.Cap)
	}
	type bare struct{ N uint8 }
	if _, ok := newMachineCodec[bare](); ok {
		t.Error("a codec for a state with no capture")
	}
}
