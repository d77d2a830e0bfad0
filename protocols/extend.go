package protocols

import (
	"fmt"
	"slices"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
)

// Property is a property over the model.Capture every protocol's state
// embeds, so that it applies to any protocol: Check for Always and
// Sometimes, Step (the capture before and after a step) for Transition.
type Property struct {
	Name, Cite string
	Kind       explore.Kind
	Class      invariants.Class // "" for a sometimes-property
	OptIn      bool
	Check      func(c *model.Capture) string
	Step       func(s, t *model.Capture) string
}

// Extension is what Extend adds to a protocol.
type Extension struct {
	Name string // the extended protocol's name; "" keeps p's
	// Properties are checked after p's own.
	Properties []Property
	// Constraint, when set, bounds the search: a state for which it is
	// false is checked but not explored further (TLC's CONSTRAINT).
	Constraint func(c *model.Capture) bool
	// With names opt-in properties the extended protocol checks by
	// default (in check, and in spec files that do not list `only`), as
	// if --with named them.
	With []string
	// ValueBlind declares that Properties and Constraint compare values
	// only with each other and with ⊥, so p's value renaming (--symmetry)
	// still applies; without it an extension that adds either has none.
	ValueBlind bool
}

// Extend returns p with ext added, in one line, for any protocol built by
// Define (every shipped one, every open discipline):
//
//	err := protocols.Register(protocols.Extend(protocols.Parallel(parts), protocols.Extension{
//		Name: "parallel-exactly-once", With: []string{"no-duplicate-delivery"}}))
//
// It panics on a mistake in the program: a protocol not
// built by Define, a state without a model.Capture, or a With name that
// is not one of the protocol's always or transition properties.
func Extend(p *Protocol, ext Extension) *Protocol {
	if p.extend == nil {
		panic(fmt.Sprintf("protocols.Extend: protocol %q was not built by Define", p.Name))
	}
	q := *p
	if ext.Name != "" {
		q.Name = ext.Name
	}
	if err := p.extend(&q, ext); err != nil {
		panic("protocols.Extend: " + err.Error())
	}
	q.with = append(slices.Clip(p.with), ext.With...)
	if (len(ext.Properties) > 0 || ext.Constraint != nil) && !ext.ValueBlind && q.valueSeeing == "" {
		q.valueSeeing = "Extension.Properties or Constraint" // they read the capture's values (symmetry.go)
	}
	props := q.Properties(q.Defaults)
	for _, name := range ext.With {
		if !slices.ContainsFunc(props, func(pr Prop) bool { return pr.Name == name && pr.Kind != explore.Sometimes }) {
			panic(fmt.Sprintf("protocols.Extend: %s has no always or transition property %q", q.Name, name))
		}
	}
	return &q
}

// extender is what Define gives a protocol for Extend: it redefines q as
// build's model with ext's properties and constraint.
func extender[S, A any](build func(cfg Config) explore.Machine[S, A]) func(q *Protocol, ext Extension) error {
	return func(q *Protocol, ext Extension) error {
		capOf, err := model.CaptureOf[S]()
		if err != nil {
			return err
		}
		var props []explore.Property[S, A]
		for _, pr := range ext.Properties {
			ep := explore.Property[S, A]{Name: pr.Name, Cite: pr.Cite, Kind: pr.Kind, Class: string(pr.Class), OptIn: pr.OptIn}
			if check := pr.Check; check != nil {
				ep.Check = func(s *S) string { return check(capOf(s)) }
			}
			if step := pr.Step; step != nil {
				ep.CheckStep = func(s *S, _ A, t *S) string { return step(capOf(s), capOf(t)) }
			}
			props = append(props, ep)
		}
		var constraint func(*S) bool
		if c := ext.Constraint; c != nil {
			constraint = func(s *S) bool { return c(capOf(s)) }
		}
		defineMachine(q, func(cfg Config) explore.Machine[S, A] {
			return explore.Extend(build(cfg), explore.Extra[S, A]{Properties: props, Constraint: constraint})
		})
		return nil
	}
}
