package protocols

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/cutcheck/cutcheck/model"
)

// machineCodec is DefineMachine's codec for a state that holds a
// model.Capture beside fixed-size fields: the capture as AppendTo writes
// it, then the bytes of every other field, padding left out. The plan is
// made once by reflection; a call copies bytes. The default codec walks
// the state by reflection on every call, as the capture's padding keeps
// it from copying memory: some 12 times slower on a whole run.
type machineCodec[S any] struct {
	capOff uintptr
	spans  []span // the other fields' bytes, in order, adjacent ones merged
	size   int
}

// span is n bytes at offset off of a state.
type span struct{ off, n uintptr }

// newMachineCodec returns the codec for S, false when S is not a
// model.Capture, has none as a field, or has another field that is not of
// fixed size.
func newMachineCodec[S any]() (*machineCodec[S], bool) {
	t, ct := reflect.TypeFor[S](), reflect.TypeFor[model.Capture]()
	if t.Kind() != reflect.Struct || binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		return nil, false
	}
	if t == ct { // a state that is the capture alone
		return &machineCodec[S]{}, true
	}
	c, found := &machineCodec[S]{}, false
	for i := range t.NumField() {
		f := t.Field(i)
		switch {
		case f.Type == ct && !found:
			c.capOff, found = f.Offset, true
		case f.Name == "_":
		default:
			var ok bool
			if c.spans, ok = plainSpans(f.Type, f.Offset, c.spans); !ok {
				return nil, false
			}
		}
	}
	for _, sp := range c.spans {
		c.size += int(sp.n)
	}
	return c, found
}

// plainSpans appends the bytes of a fixed-size value of type t at offset
// off to out, padding and blank fields left out.
func plainSpans(t reflect.Type, off uintptr, out []span) ([]span, bool) {
	switch t.Kind() {
	case reflect.Bool, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		if n := len(out); n > 0 && out[n-1].off+out[n-1].n == off {
			out[n-1].n += t.Size()
			return out, true
		}
		return append(out, span{off, t.Size()}), true
	case reflect.Array:
		for i := range t.Len() {
			var ok bool
			if out, ok = plainSpans(t.Elem(), off+uintptr(i)*t.Elem().Size(), out); !ok {
				return nil, false
			}
		}
		return out, true
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.Name != "_" {
				var ok bool
				if out, ok = plainSpans(f.Type, off+f.Offset, out); !ok {
					return nil, false
				}
			}
		}
		return out, true
	}
	return nil, false
}

func (c *machineCodec[S]) Encode(s *S, buf []byte) []byte {
	p := unsafe.Pointer(s)
	buf = (*model.Capture)(unsafe.Add(p, c.capOff)).AppendTo(buf)
	for _, sp := range c.spans {
		if sp.n == 1 {
			buf = append(buf, *(*byte)(unsafe.Add(p, sp.off)))
			continue
		}
		buf = append(buf, unsafe.Slice((*byte)(unsafe.Add(p, sp.off)), sp.n)...)
	}
	return buf
}

func (c *machineCodec[S]) Decode(b []byte, s *S) error {
	p := unsafe.Pointer(s)
	rest, ok := (*model.Capture)(unsafe.Add(p, c.capOff)).DecodeFrom(b)
	if !ok || len(rest) != c.size {
		return fmt.Errorf("bad state encoding (%d bytes)", len(b))
	}
	for _, sp := range c.spans {
		if sp.n == 1 {
			*(*byte)(unsafe.Add(p, sp.off)), rest = rest[0], rest[1:]
			continue
		}
		rest = rest[copy(unsafe.Slice((*byte)(unsafe.Add(p, sp.off)), sp.n), rest):]
	}
	return nil
}
