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
// The encoding is the capture as AppendTo writes it, then a field of
// phases declared Packed (first, if any) in one byte, two bits an element;
// then the state's bytes from the first declared to the last, as the state
// holds them (a row's key and value, not its label), those not declared
// (padding, a row's label, fields not declared) as zero; then a PerUnit
// field's (last, if any) elements of the units recorded. A call copies
// that block in 8-byte words: classic's three bytes and dump's six are
// one word, readonly's twenty-one three, and composite's four with its
// four per-unit bytes right after them one.
type Layout[S any] struct {
	capOff uintptr
	fields []LayoutField
	packed *LayoutField // the Packed field, the first encoded, if any
	// The declared bytes, Packed and PerUnit aside, lie in a block of
	// fixed bytes from block on, encoded as one: its whole 8-byte chunks
	// (full: the bytes of each that are declared), then last.
	block uintptr
	fixed int
	full  []uint64
	last  word
	// one: last is all, a PerUnit field's bytes (if any) right after the
	// block's and in its word: no loop (classic, dump, composite).
	one bool
	// perUnit: the last field is PerUnit, its bytes are unit's, of which
	// a call takes as many as there are units recorded.
	perUnit bool
	unit    word
	keys    int // keys in scope, for the capture's fields and view
	shown   []shown[S]
}

// word is up to 8 bytes of the state copied as one: a call reads (and
// Decode writes back) the 8 bytes at at, of which the n at bit shift are
// the word's and, of those, keep's are declared.
type word struct {
	at    uintptr
	shift uint
	n     int
	mask  uint64
	keep  uint64
}

// newWord is the word of the n ≤ 8 bytes at off of a state of size bytes.
func newWord(off uintptr, n int, size uintptr) word {
	at := min(off, size-8)
	shift := uint(off-at) * 8
	keep := ^uint64(0) >> (64 - 8*n) // 0 when n is
	return word{at, shift, n, keep << shift, keep}
}

// load is the word's bytes from the state at p, those not declared zero.
func (x *word) load(p unsafe.Pointer) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice((*byte)(unsafe.Add(p, x.at)), 8)) >> x.shift & x.keep
}

// store writes the low n bytes of v (mask: those of the word) into the
// state at p, the other bytes of its 8 as they were.
func (x *word) store(p unsafe.Pointer, v, mask uint64) {
	b := unsafe.Slice((*byte)(unsafe.Add(p, x.at)), 8)
	binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)&^mask|v<<x.shift&mask)
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
	var gather []uintptr // the declared bytes' offsets
	for _, f := range fields {
		f.resolve(t)
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
		if f.perUnit { // resolve checked it holds MaxUnits (≤ 8) bytes
			l.unit = newWord(f.off, model.MaxUnits, t.Size())
			continue
		}
		for j := range f.n {
			gather = f.gather(gather, j)
		}
	}
	slices.Sort(gather)
	for i, o := range gather {
		switch {
		case i > 0 && o == gather[i-1]:
			panic(fmt.Sprintf("protocols: %v's fields overlap", t))
		case o < l.capOff+unsafe.Sizeof(model.Capture{}):
			panic(fmt.Sprintf("protocols: %v declares a field before Cap's end", t))
		}
	}
	if !plainType(t) {
		panic(fmt.Sprintf("protocols: %v holds pointers", t))
	}
	if len(gather) > 0 {
		l.block, l.fixed = gather[0], int(gather[len(gather)-1]-gather[0]+1)
	}
	keep := func(from uintptr, n int) (m uint64) { // the declared bytes of n from from
		for _, o := range gather {
			if o >= from && o < from+uintptr(n) {
				m |= 0xff << (8 * (o - from))
			}
		}
		return m
	}
	whole := l.fixed / 8
	for i := range whole {
		l.full = append(l.full, keep(l.block+uintptr(8*i), 8))
	}
	rest := l.block + uintptr(8*whole)
	l.last = newWord(rest, l.fixed-8*whole, t.Size())
	l.last.keep = keep(rest, l.last.n)
	l.last.mask = l.last.keep << l.last.shift
	l.one = whole == 0 && l.packed == nil && !l.perUnit
	if u := l.unit.at + uintptr(l.unit.shift/8); whole == 0 && l.packed == nil && l.perUnit &&
		(l.fixed == 0 || u == rest+uintptr(l.last.n)) && l.last.n+model.MaxUnits <= 8 {
		if l.fixed == 0 {
			rest = u
		}
		keep := keep(rest, l.last.n) | (^uint64(0)>>(64-8*model.MaxUnits))<<(8*l.last.n)
		l.last = newWord(rest, l.last.n+model.MaxUnits, t.Size())
		l.last.keep, l.last.mask, l.one = keep, keep<<l.last.shift, true
	}
	return l
}

// plainType reports whether t holds no pointers: a word's write puts back
// the bytes beside it, as only plain bytes may be.
func plainType(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Array:
		return plainType(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !plainType(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return t.Kind() <= reflect.Complex128 && t.Kind() != reflect.Uintptr
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

// gather appends the offsets of element j's bytes.
func (f *LayoutField) gather(g []uintptr, j int) []uintptr {
	at := f.off + uintptr(j)*f.stride
	if f.Meaning == "rows" { // key and value, not the label
		return append(g, at+unsafe.Offsetof(model.Event{}.Key), at+unsafe.Offsetof(model.Event{}.Img))
	}
	for b := range f.width {
		g = append(g, at+b)
	}
	return g
}

func (l *Layout[S]) capture(s *S) *model.Capture {
	return (*model.Capture)(unsafe.Add(unsafe.Pointer(s), l.capOff))
}

// Encode appends the state's encoding to buf.
func (l *Layout[S]) Encode(s *S, buf []byte) []byte {
	c := l.capture(s)
	buf = c.AppendTo(buf)
	p, o := unsafe.Pointer(s), len(buf)
	if l.one && cap(buf)-o >= 8 { // AppendTo leaves 8 bytes' room
		binary.LittleEndian.PutUint64(buf[o:o+8], l.last.load(p))
		if l.perUnit {
			return buf[:o+l.fixed+int(c.Plan.N)]
		}
		return buf[:o+l.fixed]
	}
	if f := l.packed; f != nil {
		var x byte
		for j := range f.n {
			x |= (*(*byte)(unsafe.Add(p, f.off+uintptr(j)*f.stride)) & 3) << (2 * j)
		}
		buf = append(buf, x)
		o++
	}
	if l.fixed == 0 && !l.perUnit {
		return buf
	}
	buf = slices.Grow(buf, l.fixed+16)
	w := buf[:cap(buf)]
	q := unsafe.Add(p, l.block)
	for i, m := range l.full {
		binary.LittleEndian.PutUint64(w[o:], binary.LittleEndian.Uint64(unsafe.Slice((*byte)(unsafe.Add(q, 8*i)), 8))&m)
		o += 8
	}
	binary.LittleEndian.PutUint64(w[o:], l.last.load(p))
	o += l.last.n
	if l.perUnit {
		binary.LittleEndian.PutUint64(w[o:], l.unit.load(p))
		o += int(c.Plan.N)
	}
	return buf[:o]
}

// Decode is the inverse of Encode; s is the zero state.
func (l *Layout[S]) Decode(in []byte, s *S) error {
	c := l.capture(s)
	b, ok := c.DecodeFrom(in)
	n := l.fixed
	if l.perUnit {
		n += int(c.Plan.N)
	}
	if l.one && ok && len(b) == n && len(in) >= 8 {
		x := &l.last
		x.store(unsafe.Pointer(s), wordAt(in, len(in)-len(b)), x.mask&(^uint64(0)>>(64-8*n)<<x.shift))
		return nil
	}
	if l.packed != nil {
		n++
	}
	if !ok || len(b) != n || len(in) < 8 {
		return errLayout
	}
	p, o := unsafe.Pointer(s), len(in)-len(b)
	if l.packed != nil {
		o++
	}
	// A whole chunk is written as it is: what is not declared in it is
	// zero in the encoding and in the zero state. The packed and per-unit
	// fields are written after it.
	q := unsafe.Add(p, l.block)
	for i, m := range l.full {
		binary.LittleEndian.PutUint64(unsafe.Slice((*byte)(unsafe.Add(q, 8*i)), 8), binary.LittleEndian.Uint64(in[o:])&m)
		o += 8
	}
	x := &l.last
	x.store(p, wordAt(in, o), x.mask)
	o += x.n
	if f := l.packed; f != nil {
		for j := range f.n {
			*(*byte)(unsafe.Add(p, f.off+uintptr(j)*f.stride)) = b[0] >> (2 * j) & 3
		}
	}
	if u := &l.unit; l.perUnit {
		u.store(p, wordAt(in, o), ^uint64(0)>>(64-8*c.Plan.N)<<u.shift)
	}
	return nil
}

// wordAt is the 8 bytes of b from o on, those past b's end zero; b holds
// 8 at least.
func wordAt(b []byte, o int) uint64 {
	if o+8 <= len(b) {
		return binary.LittleEndian.Uint64(b[o:])
	}
	return binary.LittleEndian.Uint64(b[len(b)-8:]) >> (8 * (o + 8 - len(b)))
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
