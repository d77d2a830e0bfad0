package protocols_test

import (
	"context"
	"fmt"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
)

// copier is a row copier without watermarks, as gh-ost and ghostferry copy
// a table: the change stream is applied from the start, and each chunk is
// copied under its rows' locks — read at the log's end r and inserted with
// no commit in between — into an insert-ignore sink, so a copy never
// overwrites a streamed row. A copy is a point unit (r, r], closed as made.
// Everything but the three actions is the kit's (DefineMachine).
type copier struct{ cfg protocols.Config }

type copierState struct {
	Cap    model.Capture
	Copied uint8 // chunks copied, in key order
}

type copierAction struct {
	Copy, Consume bool // else commit Txn
	Txn           protocols.Txn
}

func (m copier) Init() (out []copierState) {
	for _, c := range protocols.InitialCaptures(&m.cfg) {
		out = append(out, copierState{Cap: c})
	}
	return out
}

func (m copier) Actions(s *copierState, buf []copierAction) []copierAction {
	for t := range protocols.Commits(&m.cfg, &s.Cap.Log) {
		buf = append(buf, copierAction{Txn: t})
	}
	if int(s.Copied) < m.cfg.Chunks {
		buf = append(buf, copierAction{Copy: true})
	}
	if s.Cap.Pos < s.Cap.Log.Len() {
		buf = append(buf, copierAction{Consume: true})
	}
	return buf
}

func (m copier) Next(s *copierState, a copierAction, t *copierState) bool {
	c := &t.Cap
	switch {
	case a.Copy: // read and insert chunk Copied at r, locked
		r := c.Log.Len()
		u := model.Unit{Domain: protocols.ChunkKeys(int(t.Copied), m.cfg.Keys, m.cfg.Chunks), Lo: r, Hi: r}
		for k := range u.Domain.Keys() {
			u.Refresh[k], c.ReadAt[k], u.Read = c.Log.Sigma(r, k), r, u.Read.With(k)
			if u.Refresh[k] != model.Absent {
				c.EmitCopy(k, u.Refresh[k], r)
			}
		}
		c.Plan.Add(u)
		c.Closed, t.Copied = c.Closed|1<<t.Copied, t.Copied+1
	case a.Consume: // apply the next change of a captured key
		c.Pos++
		if e := c.Log.At(c.Pos); e.Key < model.Key(m.cfg.Keys) {
			c.Emit(e.Key, e.Img, c.Pos)
		}
	default:
		return c.Log.Commit(a.Txn.Events()...)
	}
	return true
}

func (m copier) Properties() []explore.Property[copierState, copierAction] {
	return invariants.Standard[copierState, copierAction](m.cfg.Chunks)
}

// The copier on the kit's defaults, checked with every property to the end
// (check --all): nothing is lost at rest, and once the stream has passed
// every copy the sink holds the source's state; on the way a copy is newer
// than the events still to be applied, so the stream is not per-key
// monotone and a copied key is stale until the stream catches up. The same
// copier into a sink that cannot delete loses the deletes.
func Example_rowCopier() {
	p := protocols.DefineMachine(&protocols.Protocol{
		Name: "row-copier", Doc: "streaming first, each chunk copied under a row lock with insert-ignore",
		Defaults: protocols.Config{Keys: 2, Values: 2, Events: 3, Chunks: 2, Txn: 2, Sink: model.InsertIgnore},
		Limits:   protocols.Limits{Keys: model.MaxKeys, Values: 8, Events: model.MaxLog, Chunks: model.MaxUnits, Txn: protocols.MaxTxn},
	}, func(cfg protocols.Config) explore.Machine[copierState, copierAction] { return copier{cfg} })
	cfg := p.Defaults
	for _, sink := range []*model.SinkRule{model.InsertIgnore, model.UpsertOnly} {
		cfg.Sink = sink
		rep, err := p.Check(context.Background(), cfg, explore.Options{Continue: true})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: %s\n", sink, rep.VerdictName)
		for _, v := range rep.Violations {
			fmt.Printf("  violated: %s (%s)\n", v.Property, v.Class)
		}
	}
	// Output:
	// insert-ignore: violated
	//   violated: closed-unit-cut (transient)
	//   violated: per-key-monotonicity (transient)
	// upsert-only: violated
	//   violated: final-replay (final)
	//   violated: frontier-replay (transient)
	//   violated: closed-unit-cut (transient)
	//   violated: per-key-monotonicity (transient)
}
