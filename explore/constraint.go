package explore

// StateConstrainer is implemented by models that bound their search with a
// state constraint, as TLC's CONSTRAINT does: a successor t for which
// StateConstraint(t) is false is generated, counted and checked (Always and
// Sometimes properties; Transition properties on the step to it), but it is
// not added to the seen-set and not expanded. The same holds for an initial
// state outside the constraint, which is checked but not kept (and not
// counted in Stats.Initial or Distinct).
type StateConstrainer[S any] interface {
	StateConstraint(s *S) bool
}

// ActionConstrainer is implemented by models that bound their search with
// an action constraint, as TLC's ACTION_CONSTRAINT does: a step s -a-> t for
// which ActionConstraint(s, a, t) is false is generated, counted and
// checked, but t is not kept through it (it may still be kept when reached
// by another step).
type ActionConstrainer[S, A any] interface {
	ActionConstraint(s *S, a A, t *S) bool
}

// constraints holds a model's optional constraints.
type constraints[S, A any] struct {
	any    bool // either is set (spares the hot loop a call)
	state  StateConstrainer[S]
	action ActionConstrainer[S, A]
}

func newConstraints[S, A any](m any) constraints[S, A] {
	var c constraints[S, A]
	c.state, _ = part[StateConstrainer[S]](m)
	c.action, _ = part[ActionConstrainer[S, A]](m)
	c.any = c.state != nil || c.action != nil
	return c
}

// inState reports whether an initial state lies inside the state constraint.
func (c *constraints[S, A]) inState(s *S) bool {
	return c.state == nil || c.state.StateConstraint(s)
}

// inStep reports whether the step s -a-> t lies inside both constraints.
func (c *constraints[S, A]) inStep(s *S, a A, t *S) bool {
	return (c.state == nil || c.state.StateConstraint(t)) && (c.action == nil || c.action.ActionConstraint(s, a, t))
}
