package model

import (
	"fmt"
	"reflect"
	"unsafe"
)

// CaptureOf finds the Capture in a state type S: S itself, or a field of S
// (named or embedded, at the top level), as every protocol's state holds
// one. The returned function reads it at a fixed offset, at no cost per
// call; the kit uses it to attach invariants, views and extensions to any
// such state.
func CaptureOf[S any]() (func(*S) *Capture, error) {
	t, ct := reflect.TypeFor[S](), reflect.TypeFor[Capture]()
	if t == ct {
		return func(s *S) *Capture { return (*Capture)(unsafe.Pointer(s)) }, nil
	}
	if t.Kind() == reflect.Struct {
		for i := range t.NumField() {
			if f := t.Field(i); f.Type == ct {
				off := f.Offset
				return func(s *S) *Capture { return (*Capture)(unsafe.Add(unsafe.Pointer(s), off)) }, nil
			}
		}
	}
	return nil, fmt.Errorf("the state type %v has no model.Capture field", t)
}
