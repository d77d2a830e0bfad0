package specs

import (
	"fmt"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
)

// Identify returns opts with the search identity's fields of checking p
// under cfg (explore.Options.Identity): the build, the protocol (its
// registered name and the version it declares for its parts), every
// bound, the mode, the initial store, the source's no-op writes and
// whole-server log, the fixed history, the fixed onset, the mutation, a
// sink rule other than the default, and a coordinate base other than 1. With the options' own (deadlock
// checking, the properties checked, symmetry, the depth limit, the shard
// split), opts.SearchIdentity() is the identity every file a later run
// reads back carries.
func Identify(p *protocols.Protocol, cfg protocols.Config, opts explore.Options) explore.Options {
	initial := "empty"
	switch {
	case cfg.InitialAny:
		initial = "any"
	case cfg.Initial != (model.Store{}):
		initial = protocols.StoreString(cfg.Initial, cfg.Keys)
	}
	history, onset := "free", "any"
	if cfg.History.N > 0 {
		history = protocols.HistoryString(&cfg.History)
	}
	if cfg.Onset > 0 {
		onset = fmt.Sprint(cfg.Onset - 1)
	}
	opts.Identity = explore.Identity{}.
		With("build", explore.BuildIdentity()).
		With("protocol", p.Name).
		With("protocol-version", p.Version).
		With("keys", fmt.Sprint(cfg.Keys)).
		With("values", fmt.Sprint(cfg.Values)).
		With("events", fmt.Sprint(cfg.Events)).
		With("chunks", fmt.Sprint(cfg.Chunks)).
		With("txn", fmt.Sprint(cfg.Txn)).
		With("mode", cfg.Mode).
		With("initial", initial).
		With("noops", fmt.Sprint(cfg.NoOps)).
		With("history", history).
		With("onset", onset).
		With("whole-server", fmt.Sprint(cfg.WholeServer)).
		With("mutation", cfg.Fault.String())
	if !cfg.Sink.IsLastWriterWins() { // absent under the default, so earlier identities stand
		opts.Identity = opts.Identity.With("sink", cfg.Sink.Name)
	}
	if cfg.CoordBase > 1 { // absent at 1, so earlier identities stand
		opts.Identity = opts.Identity.With("coord-base", fmt.Sprint(cfg.CoordBase))
	}
	return opts
}

// Identity is the search identity of running s with opts, as Run runs it:
// what results/table.json records with its row, and what a results set's
// manifest can record of each spec.
func (s Spec) Identity(opts explore.Options) (explore.Identity, error) {
	cfg, p, err := s.Config()
	if err != nil {
		return nil, err
	}
	return Identify(p, cfg, s.Options(opts)).SearchIdentity(), nil
}
