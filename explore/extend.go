package explore

// Extend returns m with more properties and a state constraint: a shipped
// model checked for one more claim, or within a smaller space, without
// writing a model. The properties are checked after m's own; a state
// outside the constraint (nil = none) is checked but not explored further,
// as with m's own StateConstrainer, which still applies. Every optional
// part of m (codec, descriptions, fields, view, grade, symmetry, shard
// key, ...) is m's.
func Extend[S, A any](m Machine[S, A], props []Property[S, A], constraint func(*S) bool) Machine[S, A] {
	return &extended[S, A]{Machine: m, props: props, constraint: constraint}
}

type extended[S, A any] struct {
	Machine[S, A]
	props      []Property[S, A]
	constraint func(*S) bool
}

func (x *extended[S, A]) Properties() []Property[S, A] {
	return append(x.Machine.Properties(), x.props...)
}

func (x *extended[S, A]) StateConstraint(s *S) bool {
	if x.constraint != nil && !x.constraint(s) {
		return false
	}
	c, ok := part[StateConstrainer[S]](x.Machine)
	return !ok || c.StateConstraint(s)
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
