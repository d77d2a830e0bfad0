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
// overwrites a streamed row. A copy is a point unit (r, r], closed as made
// (CopyAt). Its state is the capture alone; everything but the three
// actions is the kit's (DefineMachine).
type copier struct{ cfg protocols.Config }

type copierAction struct {
	Do  string // "commit" Txn, "copy" the next chunk, or "consume"
	Txn protocols.Txn
}

func (a copierAction) String() string { return a.Do }

func (m copier) Init() []model.Capture { return protocols.InitialCaptures(&m.cfg) }

func (m copier) Actions(c *model.Capture, buf []copierAction) []copierAction {
	for t := range protocols.Commits(&m.cfg, &c.Log) {
		buf = append(buf, copierAction{Do: "commit", Txn: t})
	}
	if int(c.Plan.N) < m.cfg.Chunks {
		buf = append(buf, copierAction{Do: "copy"})
	}
	if c.Pos < c.Log.Len() {
		buf = append(buf, copierAction{Do: "consume"})
	}
	return buf
}

func (m copier) Next(c *model.Capture, a copierAction, t *model.Capture) bool {
	switch a.Do {
	case "copy":
		protocols.CopyAt(t, int(t.Plan.N), &m.cfg)
	case "consume":
		protocols.ConsumeNext(t, &m.cfg)
	default:
		return t.Log.Commit(a.Txn.Events()...)
	}
	return true
}

func (m copier) Properties() []explore.Property[model.Capture, copierAction] {
	return invariants.Standard[model.Capture, copierAction](m.cfg.Chunks)
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
	}, func(cfg protocols.Config) explore.Machine[model.Capture, copierAction] { return copier{cfg} })
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
