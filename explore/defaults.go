package explore

import (
	"encoding/binary"
	"fmt"
	"reflect"
)

// parts are the optional parts of a Machine, from the model or by default.
type parts[S, A any] struct {
	fpenc  Encoder[S] // the bytes a state is identified by (fingerprint input; of its canonical form with a symmetry, see fpEncode)
	qcodec Codec[S]   // the bytes a state waits in the queue as
	// same: fpenc and qcodec write the same bytes, so one encoding serves both.
	same bool
	// mem: qcodec is the memory codec, which expansion applies inline.
	mem      bool
	symmetry bool         // states are identified by their canonical forms (symmetry.go)
	sym      Symmetric[S] // the model's symmetry, when symmetry is set
	symCheck Symmetric[S] // the symmetry verified on every state (Options.CheckSymmetry)
	describe Describer[S, A]
	kinds    ActionNamer[A]
	grade    Graded[S]  // the model's grade, unless Options.NoGrade (grade.go)
	gradeDec Decoder[S] // decodes fpenc's bytes to check the grade on them; nil for the default codec, which keeps every field
	// gradeLater: a kept successor's grade is checked when it is expanded
	// (grade.go), not when it is made; grade0 is the initial states'.
	gradeLater bool
	grade0     uint64
}

func newParts[S, A any](m Machine[S, A]) (parts[S, A], error) {
	var p parts[S, A]
	enc, hasEnc := part[Encoder[S]](m)
	c, hasCodec := part[Codec[S]](m)
	switch {
	case hasCodec:
		p.fpenc, p.qcodec, p.same = c, c, true
	default:
		bc, err := newBinaryCodec[S]()
		if err != nil {
			if hasEnc {
				return p, fmt.Errorf("explore: the model has Encode but no Decode, and %v", err)
			}
			return p, fmt.Errorf("explore: the model has no Encode and Decode, and %v", err)
		}
		var dc Codec[S] = bc
		if mc, ok := newMemCodec[S](); ok {
			dc, p.mem = mc, true // the same bytes, copied rather than walked
		}
		p.fpenc, p.qcodec, p.same = dc, dc, true
		if hasEnc {
			p.fpenc, p.same = enc, false
		}
	}
	p.describe = describer(m)
	p.kinds, _ = part[ActionNamer[A]](m)
	if p.kinds == nil {
		p.kinds = oneKind[A]{}
	}
	return p, nil
}

// binaryCodec encodes a fixed-size state with encoding/binary, little
// endian.
type binaryCodec[S any] struct{}

// newBinaryCodec checks that S is of fixed size and that a value survives
// the round trip (encoding/binary cannot set unexported fields).
func newBinaryCodec[S any]() (c binaryCodec[S], err error) {
	var zero S
	// binary.Size accepts a slice of fixed-size values, but its length is
	// not encoded: only a value of one size throughout will do.
	if binary.Size(zero) < 0 || reflect.TypeFor[S]().Kind() == reflect.Slice {
		return c, fmt.Errorf("its state type %v is not a fixed-size value for encoding/binary (no int, string, slice, map or pointer): give the model Encode and Decode", reflect.TypeFor[S]())
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("encoding/binary cannot decode its state type %v (%v): export its fields or give the model Encode and Decode", reflect.TypeFor[S](), r)
		}
	}()
	var back S
	if err := c.Decode(c.Encode(&zero, nil), &back); err != nil {
		return c, fmt.Errorf("encoding/binary cannot decode its state type %v: %v", reflect.TypeFor[S](), err)
	}
	return c, nil
}

func (binaryCodec[S]) Encode(s *S, buf []byte) []byte {
	out, err := binary.Append(buf, binary.LittleEndian, s)
	if err != nil {
		panic(fmt.Sprintf("explore: encoding a state: %v", err)) // S was checked
	}
	return out
}

func (binaryCodec[S]) Decode(b []byte, s *S) error {
	n, err := binary.Decode(b, binary.LittleEndian, s)
	if err == nil && n != len(b) {
		err = fmt.Errorf("%d bytes left over", len(b)-n)
	}
	return err
}

// describer is m's Describer, or describeV.
func describer[S, A any](m Machine[S, A]) Describer[S, A] {
	if d, ok := part[Describer[S, A]](m); ok {
		return d
	}
	return describeV[S, A]{}
}

// describeV renders an action with fmt's %v.
type describeV[S, A any] struct{}

func (describeV[S, A]) Describe(_ *S, a A) string { return fmt.Sprint(a) }

// oneKind puts every action in one kind, "step".
type oneKind[A any] struct{}

func (oneKind[A]) ActionNames() []string { return []string{"step"} }
func (oneKind[A]) ActionKind(A) int      { return 0 }
