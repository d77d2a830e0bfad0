package cli

import (
	"fmt"
	"io"

	"github.com/cutcheck/cutcheck/certify"
	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
)

// runOf rebuilds the run a counterexample recorded from its states' views:
// the last state's log, plan, start and position (the frontier), the base
// store from the first state, and the emitted stream from the replays step
// by step — each key whose replayed entry changed was emitted, in key order
// (every protocol emits at most one entry per key in a step; a repeated
// entry that changes nothing is not seen).
func runOf(tr *explore.TraceReport, discipline string) (certify.ModelRun, error) {
	views := make([]protocols.View, len(tr.Steps))
	for i, st := range tr.Steps {
		v, ok := st.View.(protocols.View)
		if !ok {
			return certify.ModelRun{}, fmt.Errorf("the model's states have no capture view to export")
		}
		views[i] = v
	}
	first, last := views[0], views[len(views)-1]
	l := &model.Log{}
	for _, kv := range first.Source { // σ_0: the base store
		l.Init[kv.Key] = model.Value(kv.Value)
	}
	for i := 0; i < len(last.Log); {
		var txn []model.Event
		for j := i; j < len(last.Log) && last.Log[j].Txn == last.Log[i].Txn; j++ {
			e := last.Log[j]
			if e.Key < 0 {
				txn = append(txn, model.Event{Key: model.NoKey})
			} else {
				txn = append(txn, model.Event{Key: model.Key(e.Key), Img: model.Value(e.Value)})
			}
		}
		if !l.Commit(txn...) {
			return certify.ModelRun{}, fmt.Errorf("the counterexample's log is longer than a model log")
		}
		i += len(txn)
	}
	p := &model.Plan{Keys: uint8(len(last.Source)), Frontier: model.Coord(last.Consumed)}
	for _, uv := range last.Units {
		u := model.Unit{Lo: model.Coord(uv.Lo), Hi: model.Coord(uv.Hi)}
		if !uv.Closed && uv.Hi < uv.Lo {
			// No high edge recorded yet: the window has not closed in the
			// recorded log, and no cut is certified until it does.
			u.Hi = model.Coord(len(last.Log) + 1)
		}
		for _, k := range uv.Keys {
			u.Domain = u.Domain.With(model.Key(k))
		}
		for _, r := range uv.Reads {
			u.Read = u.Read.With(model.Key(r.Key))
			u.Refresh[r.Key] = model.Value(r.Value)
		}
		p.Add(u)
	}
	var stream model.Stream
	for i := 1; i < len(views); i++ {
		a, b := views[i-1].Replay, views[i].Replay
		for k := range b {
			if k >= len(a) || a[k] != b[k] {
				stream = append(stream, model.Entry{Key: model.Key(b[k].Key), Val: model.Value(b[k].Value), Tag: model.Coord(b[k].Tag)})
			}
		}
	}
	return certify.ModelRun{Log: l, Plan: p, Start: model.Coord(last.Start), Frontier: model.Coord(last.Consumed),
		Discipline: discipline, Stream: stream}, nil
}

// writeBundle writes a counterexample's run as an evidence bundle, which
// `cutcheck certify` then judges on its own.
func writeBundle(w io.Writer, tr *explore.TraceReport, discipline string) error {
	r, err := runOf(tr, discipline)
	if err != nil {
		return err
	}
	return certify.WriteModelBundle(w, r)
}
