package protocols_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
)

// bareSplice is the point splice of Example_discipline with only the
// minimal set, Init, Actions, Next and Properties: no codec, descriptions,
// action kinds, fields, view or Done of its own. stale reads the dump one
// position early, a bug.
type bareSplice struct {
	m     splice
	stale bool
}

func (b bareSplice) Init() []spliceState { return b.m.Init() }
func (b bareSplice) Actions(s *spliceState, buf []spliceAction) []spliceAction {
	return b.m.Actions(s, buf)
}
func (b bareSplice) Next(s *spliceState, a spliceAction, t *spliceState) bool {
	b.m.Next(s, a, t)
	if b.stale && a.Kind == spliceDump && t.Cap.Plan.Units[0].Hi > 0 {
		u, r := &t.Cap.Plan.Units[0], t.Cap.Plan.Units[0].Hi
		for k := model.Key(0); k < model.Key(b.m.cfg.Keys); k++ {
			u.Refresh[k], t.Cap.ReadAt[k] = t.Cap.Log.Sigma(r-1, k), r-1
			t.Buf = t.Buf.Without(k)
			if u.Refresh[k] != model.Absent {
				t.Buf = t.Buf.With(k)
			}
		}
	}
	return true
}
func (b bareSplice) Properties() []explore.Property[spliceState, spliceAction] {
	return invariants.Standard[spliceState, spliceAction](1)
}

func defineBare(stale bool) *protocols.Protocol {
	return protocols.DefineMachine(&protocols.Protocol{
		Name:     "bare-splice",
		Defaults: protocols.Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 1},
		Limits:   protocols.Limits{Keys: model.MaxKeys, Values: 8, Events: model.MaxLog, Chunks: 1, Txn: protocols.MaxTxn},
	}, func(cfg protocols.Config) explore.Machine[spliceState, spliceAction] {
		return bareSplice{splice{cfg}, stale}
	})
}

// A discipline with only the minimal set passes where the full one does
// (its at-rest states are done, not deadlocks), and a broken one fails with
// a trace that shows the capture's fields and picture.
func TestDefineMachine(t *testing.T) {
	cfg := protocols.Config{Keys: 2, Values: 2, Events: 2, Chunks: 1, Txn: 1}
	rep, err := defineBare(false).Check(context.Background(), cfg, explore.Options{Workers: 1})
	if err != nil || rep.Verdict != explore.Pass {
		t.Fatalf("bare splice: %v %v %+v", rep.Verdict, err, rep.Violation)
	}
	if fmt.Sprint(rep.Unchecked) != "[no-duplicate-delivery]" {
		t.Errorf("unchecked %v", rep.Unchecked)
	}
	rep, err = defineBare(true).Check(context.Background(), cfg, explore.Options{Workers: 1})
	if err != nil || rep.Violation == nil {
		t.Fatalf("stale bare splice: %v %v", rep.Verdict, err)
	}
	last := rep.Violation.Steps[len(rep.Violation.Steps)-1]
	if len(last.Fields) == 0 || last.View == nil || rep.Violation.Steps[1].Action == "" {
		t.Errorf("the trace lacks the capture's fields, picture or a description: %+v", last)
	}
	if _, ok := last.View.(protocols.View); !ok {
		t.Errorf("view %T, want protocols.View", last.View)
	}
	// The state's own fields are shown beside the capture's, and the
	// trace prints the step that changes one.
	var dumped bool
	for i, st := range rep.Violation.Steps {
		for _, f := range st.Fields {
			if f.Name == "Dumped" && f.Value == "true" && i > 0 {
				dumped = true
			}
		}
	}
	if !dumped || !strings.Contains(rep.Violation.Text(false), "  Dumped: false → true\n") {
		t.Errorf("the trace does not show the state's own fields:\n%s", rep.Violation.Text(false))
	}
}

// A model with only the minimal set declares its discipline like any
// protocol; a variant built by Extend keeps the one it is built from.
// Reference: §6.4
func TestDeclaredDiscipline(t *testing.T) {
	p := defineBare(false)
	if _, err := p.Discipline(""); err == nil {
		t.Error("a protocol that declares no discipline has one")
	}
	p.Disciplines = map[string]string{"": protocols.PointSplice}
	if d, err := p.Discipline(""); d != protocols.PointSplice || err != nil {
		t.Errorf("declared point-splice: got %q, %v", d, err)
	}
	dump, _ := protocols.Lookup("dump")
	q := protocols.Extend(dump, protocols.Extension{Name: "dump-renamed"})
	for mode, want := range map[string]string{protocols.DumpTrusted: protocols.PointSplice, protocols.DumpUncertain: protocols.WindowDiscard} {
		if d, err := q.Discipline(mode); d != want || err != nil {
			t.Errorf("dump-renamed %s: got %q, %v; want %q", mode, d, err, want)
		}
	}
}
