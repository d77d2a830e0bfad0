package protocols_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
)

// splice is a discipline written as a user writes one, through the public kit
// only: a point splice (§6.4). One unit owns every key; one action records
// r = the log's length and reads every key there (a consistent dump bound to
// r); the consumer streams the log from a start s0 ⊑ r, stops at r until the
// unit has closed, and the close emits the present rows tagged r.
type splice struct{ cfg protocols.Config }

// spliceState is the shared capture plus the control the discipline adds:
// whether the dump has been taken, and the rows it buffered.
type spliceState struct {
	Cap    model.Capture
	Dumped bool
	Buf    model.KeySet
}

type spliceKind uint8

const (
	spliceCommit spliceKind = iota
	spliceDump
	spliceClose
	spliceConsume
	spliceStartLater
)

type spliceAction struct {
	Kind spliceKind
	Txn  protocols.Txn
}

// Init: one state per base store (every store under initial=any).
func (m splice) Init() []spliceState {
	var out []spliceState
	for _, c := range protocols.InitialCaptures(&m.cfg) {
		out = append(out, spliceState{Cap: c})
	}
	return out
}

func (m splice) Actions(s *spliceState, buf []spliceAction) []spliceAction {
	for t := range protocols.Commits(&m.cfg, &s.Cap.Log) {
		buf = append(buf, spliceAction{Kind: spliceCommit, Txn: t})
	}
	c := &s.Cap
	if !s.Dumped {
		buf = append(buf, spliceAction{Kind: spliceDump})
	}
	if s.Dumped && !c.UnitClosed(0) && c.Pos == c.Plan.Units[0].Hi {
		buf = append(buf, spliceAction{Kind: spliceClose})
	}
	if c.Pos < c.Log.Len() && (!s.Dumped || c.UnitClosed(0) || c.Pos < c.Plan.Units[0].Hi) {
		buf = append(buf, spliceAction{Kind: spliceConsume})
		bound := protocols.NoBound // s0 ⊑ r, once r is known (S-OBS)
		if s.Dumped {
			bound = c.Plan.Units[0].Hi
		}
		if protocols.MayStartLater(c, bound) {
			buf = append(buf, spliceAction{Kind: spliceStartLater})
		}
	}
	return buf
}

func (m splice) Next(s *spliceState, a spliceAction, t *spliceState) bool {
	c := &t.Cap
	switch a.Kind {
	case spliceCommit:
		ok := c.Log.Commit(a.Txn.Events()...)
		return ok
	case spliceDump: // the point bracket (r, r] and R(k) = σ_r(k) for every key
		r := c.Log.Len()
		u := model.Unit{Domain: model.Range(0, model.Key(m.cfg.Keys)), Lo: r, Hi: r}
		for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
			u.Refresh[k], c.ReadAt[k] = c.Log.Sigma(r, k), r
			u.Read = u.Read.With(k)
			if u.Refresh[k] != model.Absent {
				t.Buf = t.Buf.With(k)
			}
		}
		c.Plan.Add(u)
		t.Dumped = true
	case spliceClose: // the spliced rows, tagged r, before every later event
		for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
			if t.Buf.Has(k) {
				c.Emit(k, c.Plan.Units[0].Refresh[k], c.Plan.Units[0].Hi)
			}
		}
		t.Buf, c.Closed = 0, 1
	case spliceConsume: // every consumed event is emitted at its place
		c.Pos++
		e := c.Log.At(c.Pos)
		c.Emit(e.Key, e.Img, c.Pos)
	case spliceStartLater:
		protocols.StartLater(c)
	}
	return true
}

// Properties: the shared invariants a point splice should satisfy, each
// paired with a sometimes-property showing the race it guards was reached.
func (m splice) Properties() []explore.Property[spliceState, spliceAction] {
	type P = explore.Property[spliceState, spliceAction]
	return []P{
		invariants.Prop[spliceState, spliceAction](invariants.FinalReplay, func(s *spliceState) string {
			return invariants.CheckFinalReplay(&s.Cap, 1)
		}),
		invariants.Prop[spliceState, spliceAction](invariants.FrontierReplay, func(s *spliceState) string {
			return invariants.CheckFrontierReplay(&s.Cap, 1)
		}),
		invariants.StepProp[spliceState, spliceAction](invariants.Monotonic, func(s *spliceState, _ spliceAction, t *spliceState) string {
			return invariants.CheckMonotone(&s.Cap, &t.Cap)
		}),
		{Name: "row-only-in-copy", Cite: "§6.4, S-OBS", Kind: explore.Sometimes, Check: func(s *spliceState) string {
			// a row the consumer never saw reached the sink through the dump
			c := &s.Cap
			for k := model.Key(0); c.Closed == 1 && k < model.Key(m.cfg.Keys); k++ {
				if s.Cap.Out.Val[k] != model.Absent && !c.Log.Touches(k, model.Window{Lo: c.Start, Hi: c.Pos}) {
					return fmt.Sprintf("%v came only from the dump", k)
				}
			}
			return ""
		}},
	}
}

// Done: at rest with every event committed; anything else without a next
// step is a deadlock.
func (m splice) Done(s *spliceState) bool {
	return s.Cap.AllClosed(1) && s.Cap.Pos == s.Cap.Log.Len() && protocols.DataEvents(&s.Cap.Log) == m.cfg.Events
}

// Encode is the capture's own encoding plus the control, byte for byte.
func (m splice) Encode(s *spliceState, buf []byte) []byte {
	var d byte
	if s.Dumped {
		d = 1
	}
	return append(s.Cap.AppendTo(buf), d, byte(s.Buf), byte(s.Buf>>8))
}

func (m splice) Decode(b []byte, s *spliceState) error {
	rest, ok := s.Cap.DecodeFrom(b)
	if !ok || len(rest) < 3 {
		return errors.New("splice: short state")
	}
	s.Dumped, s.Buf = rest[0] == 1, model.KeySet(rest[1])|model.KeySet(rest[2])<<8
	return nil
}

func (m splice) Describe(s *spliceState, a spliceAction) string {
	switch a.Kind {
	case spliceCommit:
		return protocols.DescribeCommit(&s.Cap.Log, a.Txn)
	case spliceDump:
		return fmt.Sprintf("dump every key at r = %d", s.Cap.Log.Len())
	case spliceClose:
		t := *s
		m.Next(s, a, &t)
		return "close: emit " + protocols.DescribeEmitted(&s.Cap, &t.Cap, m.cfg.Keys)
	case spliceConsume:
		return "consume " + protocols.EventString(&s.Cap.Log, s.Cap.Pos+1)
	}
	return "start later"
}

func (m splice) ActionNames() []string {
	return []string{"commit", "dump", "close", "consume", "start-later"}
}
func (m splice) ActionKind(a spliceAction) int { return int(a.Kind) }

// Fields lets traces print only what changed.
func (m splice) Fields(s *spliceState) []explore.Field {
	return append(protocols.CaptureFields(&s.Cap, m.cfg.Keys),
		explore.Field{Name: "buffer", Value: protocols.KeySetString(s.Buf, m.cfg.Keys)})
}

// A discipline of one's own, validated as a port: written from §6.4 through
// the kit, it passes, reaches its race, and explores exactly as many states
// as the shipped trusted dump (which is the same point splice) at the same
// bounds. In a program of one's own, protocols.Register(p) and cli.Main then
// give it every command.
func Example_discipline() {
	p := protocols.Define(&protocols.Protocol{
		Name:     "splice",
		Doc:      "a point splice written through the kit",
		Cite:     "§6.4",
		Defaults: protocols.Config{Keys: 2, Values: 2, Events: 3, Chunks: 1, Txn: 2},
		Limits:   protocols.Limits{Keys: model.MaxKeys, Values: 8, Events: model.MaxLog, Chunks: 1, Txn: protocols.MaxTxn},
	}, func(cfg protocols.Config) explore.Model[spliceState, spliceAction] { return splice{cfg} })
	dump, _ := protocols.Lookup("dump")

	cfg := protocols.Config{Keys: 2, Values: 2, Events: 3, Chunks: 1, Txn: 2, InitialAny: true}
	mine, _ := p.Check(context.Background(), cfg, explore.Options{})
	cfg.Mode = protocols.DumpTrusted
	shipped, _ := dump.Check(context.Background(), cfg, explore.Options{})
	fmt.Println("splice:", mine.Verdict, mine.Stats.Distinct, "states;", "trusted dump:", shipped.Stats.Distinct, "states")
	for _, r := range mine.Sometimes {
		fmt.Println(r.Name, "reached:", r.Reached)
	}
	// Output:
	// splice: pass 57087 states; trusted dump: 57087 states
	// row-only-in-copy reached: true
}
