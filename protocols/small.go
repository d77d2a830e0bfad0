package protocols

import (
	"fmt"
	"reflect"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

// DefineMachine is Define for a model with only the minimal set: Init,
// Actions, Next and Properties (explore.Machine), its state holding a
// model.Capture. The rest is the kit's: a codec derived from the state's
// type (the capture as AppendTo writes it, then the other fields' bytes;
// those must be of fixed size, as integers, booleans and fixed arrays
// are), actions described with their String method or %v and counted as
// one kind; from the capture, every trace step's fields and picture
// (CaptureFields, CaptureView, and the state's other fields as %v) and,
// unless the model has its own Done, AtRest as the states without
// successors that are expected. invariants.Standard gives the shared
// properties in one call.
func DefineMachine[S, A any](p *Protocol, build func(cfg Config) explore.Machine[S, A]) *Protocol {
	return defineMachine(p, func(cfg Config) explore.Machine[S, A] {
		m := build(cfg)
		var x explore.Extra[S, A]
		if mc, ok := newMachineCodec[S](); ok {
			x.Codec = mc
		}
		if _, ok := m.(explore.Doner[S]); !ok {
			if c, err := model.CaptureOf[S](); err == nil {
				x.Done = func(s *S) bool { return AtRest(c(s), &cfg) }
			} // else Check reports it when the model deadlocks
		}
		if x.Codec == nil && x.Done == nil {
			return m
		}
		return explore.Extend(m, x)
	})
}

// AtRest is the shipped protocols' end of a run: every unit closed, the
// source done (cfg.Events row events committed) and the consumer at the end
// of its log. A state with no successors that is not at rest is a deadlock.
func AtRest(c *model.Capture, cfg *Config) bool {
	return c.AllClosed(cfg.Chunks) && c.Pos == c.Log.Len() && DataEvents(&c.Log) == cfg.Events
}

// MayCopy is the shipped protocols' rule for a copy step: the consumer is
// at a transaction boundary, since a read sees whole transactions (§3.3).
func MayCopy(c *model.Capture) bool { return c.Log.Boundary(c.Pos) }

// CaptureGrade counts the steps behind c that every capture takes: each
// commit, each position the consumer moves on (a start-later moves it too)
// and each unit recorded. A discipline whose every step is one of these
// has it as its grade (explore.Graded); one with more steps (a read, a
// close) adds its own count.
func CaptureGrade(c *model.Capture) uint64 {
	return uint64(c.Log.Txns()) + uint64(c.Pos) + uint64(c.Plan.N)
}

// fillFromCapture gives every trace step that has no fields or picture of
// the model's own the capture's, so a model without Fields or View still
// has readable traces and a picture.
func fillFromCapture[S, A any](rep *explore.Report, r *explore.Result[S, A], keys int) {
	c, err := model.CaptureOf[S]()
	if err != nil {
		return
	}
	own := ownFields[S]()
	fill := func(tr *explore.TraceReport, v *explore.Violation[S, A]) {
		for i := range tr.Steps {
			if i >= len(v.Trace) {
				return
			}
			st := c(&v.Trace[i].State)
			if tr.Steps[i].Fields == nil {
				tr.Steps[i].Fields = append(CaptureFields(st, keys), own(&v.Trace[i].State)...)
			}
			if tr.Steps[i].View == nil {
				tr.Steps[i].View = CaptureView(st, keys)
			}
		}
	}
	if rep.Violation != nil && r.Violation != nil {
		fill(rep.Violation, r.Violation)
	}
	for i, tr := range rep.Violations {
		fill(tr, r.Violations[i])
	}
}

// ownFields gives the state's fields beside its capture, each as %v, so
// that a model without Fields still shows what its steps change in a
// trace (only changed fields are printed, explore.TraceReport.Text).
func ownFields[S any]() func(*S) []explore.Field {
	t, ct := reflect.TypeFor[S](), reflect.TypeFor[model.Capture]()
	var idx []int
	if t.Kind() == reflect.Struct && t != ct { // a state that is a capture has no fields beside it
		for i := range t.NumField() {
			if f := t.Field(i); f.Type != ct && f.Name != "_" {
				idx = append(idx, i)
			}
		}
	}
	return func(s *S) []explore.Field {
		if len(idx) == 0 {
			return nil
		}
		v, out := reflect.ValueOf(s).Elem(), make([]explore.Field, len(idx))
		for j, i := range idx {
			out[j] = explore.Field{Name: t.Field(i).Name, Value: fmt.Sprint(v.Field(i))}
		}
		return out
	}
}
