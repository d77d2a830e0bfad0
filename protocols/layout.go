package protocols

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unsafe"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

// Layout is a protocol state's declaration: its model.Capture and, after
// it, each field of the protocol's own, with its width and what it means.
// The state's codec (Encode, Decode) and its value renaming (Canonical,
// which the symmetry and the grade check both read) are derived from it,
// so a field is declared once. A protocol embeds its Layout.
//
// A field declared As a label is shown in every trace step's fields and
// in the view's control, by its meaning (a phase by its name); Show adds
// what the protocol renders itself (a buffer with its values).
//
// The encoding is the capture as AppendTo writes it, then each field in
// the order declared: a byte per byte-wide element, two little-endian
// bytes per key set, a row's key and value per row; a field of phases
// declared Packed (first, if any) takes two bits per element in one byte,
// a PerUnit field (last, if any) only the elements of the units recorded.
// NewLayout compiles the fields into a table of the state's bytes in
// encoding order, so a call gathers bytes in one loop.
type Layout[S any] struct {
	capOff uintptr
	fields []LayoutField
	packed *LayoutField // the Packed field, the first encoded, if any
	gather []uintptr    // the state's byte offsets, in encoding order
	fixed  int          // bytes after the capture, PerUnit fields aside
	// perUnit: the last field is PerUnit, its bytes the last of gather,
	// which a call takes as many of as there are units recorded.
	perUnit bool
	keys    int // keys in scope, for the capture's fields and view
	shown   []shown[S]
}

// shown is one entry of the trace's fields and the view's control.
type shown[S any] struct {
	name     string
	show     func(s *S) (string, bool)
	viewOnly bool
}

// LayoutField declares one field of a state beside its capture. Make one
// with Phase, Flag, Coords, Bytes, Keys or Rows.
type LayoutField struct {
	Path    string   // the Go field, dotted when nested ("Pending.Ev")
	Meaning string   // "phase", "flag", "coord", "byte", "keyset", "rows"
	Names   []string // a phase's names, by value
	Label   string   // shown under it in traces, when set (As)
	// N is how many elements of an array are encoded, its length when 0.
	N       int
	packed  bool
	perUnit bool
	array   bool
	beside  *LayoutField // interleaved with this field, element by element

	off    uintptr
	n      int
	stride uintptr
	width  uintptr // bytes an element is encoded in
}

// Phase declares a byte-wide control phase, or an array of them, named by
// value in names.
func Phase(path string, names []string) LayoutField {
	return LayoutField{Path: path, Meaning: "phase", Names: names}
}

// Flag declares a boolean.
func Flag(path string) LayoutField { return LayoutField{Path: path, Meaning: "flag"} }

// Coords declares a model.Coord, or an array of them.
func Coords(path string) LayoutField { return LayoutField{Path: path, Meaning: "coord"} }

// Bytes declares a byte-wide count or index, or an array of them.
func Bytes(path string) LayoutField { return LayoutField{Path: path, Meaning: "byte"} }

// Keys declares a model.KeySet, or an array of them.
func Keys(path string) LayoutField { return LayoutField{Path: path, Meaning: "keyset"} }

// Rows declares an array of model.Event standing for rows (their key and
// value; the value is renamed with the capture's).
func Rows(path string) LayoutField { return LayoutField{Path: path, Meaning: "rows"} }

// As shows the field in traces under label.
func (f LayoutField) As(label string) LayoutField { f.Label = label; return f }

// Packed encodes an array of at most four phases below 4 in one byte.
func (f LayoutField) Packed() LayoutField { f.packed = true; return f }

// PerUnit encodes only the elements of the units recorded (Plan.N).
func (f LayoutField) PerUnit() LayoutField { f.perUnit = true; return f }

// Beside encodes g's elements interleaved with f's, which g matches in
// meaning and length: f[0], g[0], f[1], ...
func (f LayoutField) Beside(g LayoutField) LayoutField { f.beside = &g; return f }

// First encodes only an array's first n elements (the rest are zero).
func (f LayoutField) First(n int) LayoutField { f.N = n; return f }

// NewLayout declares S's fields beside its model.Capture, shown with keys
// keys in scope. It panics on a declaration that does not fit S.
func NewLayout[S any](keys int, fields ...LayoutField) *Layout[S] {
	t := reflect.TypeFor[S]()
	l := &Layout[S]{keys: keys}
	cf, ok := t.FieldByName("Cap")
	if !ok || cf.Type != reflect.TypeFor[model.Capture]() {
		panic(fmt.Sprintf("protocols: %v has no Cap model.Capture", t))
	}
	l.capOff = cf.Offset
	for _, f := range fields {
		f.resolve(t)
		if g := f.beside; g != nil {
			g.resolve(t)
			if g.Meaning != f.Meaning || g.n != f.n || g.width != f.width || f.packed || f.perUnit || g.packed || g.perUnit {
				panic(fmt.Sprintf("protocols: %v's field %s does not match %s", t, g.Path, f.Path))
			}
		}
		l.fields = append(l.fields, f)
		if f.Label != "" {
			l.shown = append(l.shown, shown[S]{name: f.Label, show: showField[S](f)})
		}
	}
	for i := range l.fields {
		f := &l.fields[i]
		switch {
		case f.packed && i == 0:
			l.packed = f
			continue
		case f.perUnit && i == len(l.fields)-1:
			l.perUnit = true
		case f.packed || f.perUnit:
			panic(fmt.Sprintf("protocols: %v's field %s: a Packed field comes first, a PerUnit one last", t, f.Path))
		}
		for j := range f.n {
			l.gather = f.gather(l.gather, j)
			if f.beside != nil {
				l.gather = f.beside.gather(l.gather, j)
			}
		}
		if !f.perUnit {
			l.fixed = len(l.gather)
		}
	}
	return l
}

// resolve finds f in t and checks it is what it is declared as.
func (f *LayoutField) resolve(t reflect.Type) {
	ft, off := t, uintptr(0)
	for _, name := range strings.Split(f.Path, ".") {
		sf, ok := ft.FieldByName(name)
		if !ok {
			panic(fmt.Sprintf("protocols: %v has no field %s", t, f.Path))
		}
		ft, off = sf.Type, off+sf.Offset
	}
	f.off, f.n, f.stride = off, 1, ft.Size()
	if ft.Kind() == reflect.Array {
		f.n, f.stride, ft, f.array = ft.Len(), ft.Elem().Size(), ft.Elem(), true
	}
	if f.N > 0 {
		f.n = min(f.N, f.n)
	}
	f.width = ft.Size()
	var want reflect.Kind = reflect.Uint8
	switch f.Meaning {
	case "flag":
		want = reflect.Bool
	case "keyset":
		want = reflect.Uint16
	case "rows":
		want, f.width = reflect.Struct, 2
		if ft != reflect.TypeFor[model.Event]() {
			want = reflect.Invalid
		}
	}
	if ft.Kind() != want || f.packed && (f.n > 4 || f.perUnit) || f.perUnit && (f.width != 1 || f.stride != 1 || f.n < model.MaxUnits) {
		panic(fmt.Sprintf("protocols: %v's field %s is not a %s", t, f.Path, f.Meaning))
	}
}

// gather appends the offsets of element j's bytes, in encoding order.
func (f *LayoutField) gather(g []uintptr, j int) []uintptr {
	at := f.off + uintptr(j)*f.stride
	switch {
	case f.width == 1:
		return append(g, at)
	case f.Meaning == "rows": // key, then value
		return append(g, at+unsafe.Offsetof(model.Event{}.Key), at+unsafe.Offsetof(model.Event{}.Img))
	case littleEndian:
		return append(g, at, at+1)
	}
	return append(g, at+1, at)
}

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func (l *Layout[S]) capture(s *S) *model.Capture {
	return (*model.Capture)(unsafe.Add(unsafe.Pointer(s), l.capOff))
}

// Encode appends the state's encoding to buf.
func (l *Layout[S]) Encode(s *S, buf []byte) []byte {
	c := l.capture(s)
	buf = c.AppendTo(buf)
	at, n := len(buf), l.fixed
	if l.perUnit {
		n += int(c.Plan.N)
	}
	p := unsafe.Pointer(s)
	if f := l.packed; f != nil {
		var x byte
		for j := range f.n {
			x |= (*(*byte)(unsafe.Add(p, f.off+uintptr(j)*f.stride)) & 3) << (2 * j)
		}
		buf = append(buf, x)
		at++
	}
	buf = slices.Grow(buf, n)[:at+n]
	w, g := buf[at:], l.gather[:n]
	for j, o := range g {
		w[j] = *(*byte)(unsafe.Add(p, o))
	}
	return buf
}

// Decode is the inverse of Encode; s is the zero state.
func (l *Layout[S]) Decode(b []byte, s *S) error {
	c := l.capture(s)
	b, ok := c.DecodeFrom(b)
	n := l.fixed
	if l.perUnit {
		n += int(c.Plan.N)
	}
	if l.packed != nil {
		n++
	}
	if !ok || len(b) != n {
		return errLayout
	}
	p := unsafe.Pointer(s)
	if f := l.packed; f != nil {
		for j := range f.n {
			*(*byte)(unsafe.Add(p, f.off+uintptr(j)*f.stride)) = b[0] >> (2 * j) & 3
		}
		b, n = b[1:], n-1
	}
	g := l.gather[:n]
	for j, o := range g {
		*(*byte)(unsafe.Add(p, o)) = b[j]
	}
	return nil
}

var errLayout = errors.New("bad state encoding")

// Canonical names the state's values by first appearance: the capture's,
// then those of the rows declared (value renaming, explore.Symmetric).
func (l *Layout[S]) Canonical(s *S) S {
	t := *s
	var nm model.Namer
	l.capture(&t).NameValues(&nm)
	p := unsafe.Pointer(&t)
	for i := range l.fields {
		if f := &l.fields[i]; f.Meaning == "rows" {
			for j := range f.n {
				e := (*model.Event)(unsafe.Add(p, f.off+uintptr(j)*f.stride))
				e.Img = nm.Name(e.Img)
			}
		}
	}
	return t
}

// showField renders a declared field: a phase by its name, an array as
// "1:x 2:y", anything else as a number.
func showField[S any](f LayoutField) func(s *S) (string, bool) {
	one := func(s *S, j int) string {
		q := unsafe.Add(unsafe.Pointer(s), f.off+uintptr(j)*f.stride)
		switch {
		case f.Meaning == "keyset":
			return fmt.Sprint(*(*model.KeySet)(q))
		case f.Meaning == "flag":
			return fmt.Sprint(*(*bool)(q))
		case f.Meaning == "rows":
			return fmt.Sprint(*(*model.Event)(q))
		case int(*(*byte)(q)) < len(f.Names):
			return f.Names[*(*byte)(q)]
		}
		return fmt.Sprint(*(*byte)(q))
	}
	return func(s *S) (string, bool) {
		if !f.array {
			return one(s, 0), true
		}
		var out []string
		for j := range f.n {
			out = append(out, fmt.Sprintf("%d:%s", j+1, one(s, j)))
		}
		return strings.Join(out, " "), true
	}
}

// Show adds to the trace's fields and the view's control an entry the
// protocol renders itself; ok false leaves it out of that state.
func (l *Layout[S]) Show(name string, show func(s *S) (string, bool)) *Layout[S] {
	l.shown = append(l.shown, shown[S]{name: name, show: show})
	return l
}

// Note adds an entry to the view's control only, the same in every state.
func (l *Layout[S]) Note(name, value string) *Layout[S] {
	l.shown = append(l.shown, shown[S]{name: name, show: func(*S) (string, bool) { return value, true }, viewOnly: true})
	return l
}

// Fields is the capture's fields, then the entries shown (explore.Fielder).
func (l *Layout[S]) Fields(s *S) []explore.Field {
	f := CaptureFields(l.capture(s), l.keys)
	for _, e := range l.shown {
		if v, ok := e.show(s); ok && !e.viewOnly {
			f = append(f, explore.Field{Name: e.name, Value: v})
		}
	}
	return f
}

// View is the capture's view, its control the entries shown
// (explore.Viewer).
func (l *Layout[S]) View(s *S) any {
	v := CaptureView(l.capture(s), l.keys)
	v.Control = map[string]string{}
	for _, e := range l.shown {
		if x, ok := e.show(s); ok {
			v.Control[e.name] = x
		}
	}
	return v
}
