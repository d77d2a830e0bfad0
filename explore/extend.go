package explore

// Extra is what Extend adds to a model.
type Extra[S, A any] struct {
	// Properties are checked after the model's own.
	Properties []Property[S, A]
	// Constraint, when set, bounds the search: a state outside it is
	// checked but not explored further, as with the model's own
	// StateConstrainer, which still applies.
	Constraint func(*S) bool
	// Done, when set and the model has no Done of its own (Doner), says
	// which states without successors are expected.
	Done func(*S) bool
	// Codec, when set and the model has neither Encode nor Decode of its
	// own, encodes and decodes states in place of the default codec.
	Codec Codec[S]
}

// Extend returns m with x added: a shipped model checked for one more
// claim, or within a smaller space, without writing a model. Every
// optional part of m (codec, descriptions, fields, view, grade, symmetry,
// shard key, ...) is m's; x's codec serves only a model without one.
func Extend[S, A any](m Machine[S, A], x Extra[S, A]) Machine[S, A] {
	e := &extended[S, A]{Machine: m, x: x}
	if x.Codec != nil {
		_, enc := part[Encoder[S]](m)
		_, dec := part[Decoder[S]](m)
		if !enc && !dec {
			return &coded[S, A]{e}
		}
	}
	return e
}

// coded is an extended model with Extra's codec.
type coded[S, A any] struct{ *extended[S, A] }

func (c *coded[S, A]) Encode(s *S, buf []byte) []byte { return c.x.Codec.Encode(s, buf) }
func (c *coded[S, A]) Decode(b []byte, s *S) error    { return c.x.Codec.Decode(b, s) }

type extended[S, A any] struct {
	Machine[S, A]
	x Extra[S, A]
}

func (x *extended[S, A]) Properties() []Property[S, A] {
	return append(x.Machine.Properties(), x.x.Properties...)
}

func (x *extended[S, A]) StateConstraint(s *S) bool {
	if x.x.Constraint != nil && !x.x.Constraint(s) {
		return false
	}
	c, ok := part[StateConstrainer[S]](x.Machine)
	return !ok || c.StateConstraint(s)
}

func (x *extended[S, A]) Done(s *S) bool {
	if d, ok := part[Doner[S]](x.Machine); ok {
		return d.Done(s)
	}
	return x.x.Done != nil && x.x.Done(s)
}

func (x *extended[S, A]) inner() any { return x.Machine }

// part is m's optional part T, looked up through the models Extend wraps.
func part[T any](m any) (T, bool) {
	for {
		if t, ok := m.(T); ok {
			return t, true
		}
		w, ok := m.(interface{ inner() any })
		if !ok {
			var zero T
			return zero, false
		}
		m = w.inner()
	}
}
