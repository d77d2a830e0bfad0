package protocols

// The sink part: the merge rule the sink applies to the emitted stream
// (model.SinkRule), a choice on every protocol through Config.Sink, its
// defaults included:
//
//	p := protocols.Parallel(protocols.ParallelParts{})
//	p.Name, p.Defaults.Sink = "parallel-version-max", model.VersionMax
//
// The paper's replay is last-writer-wins from the empty store (§6, Def.
// 6.1) and the default changes nothing: the state, its encoding and every
// count are as before. Under another rule the sink can hold what the
// stream's replay does not, so the capture keeps (and encodes) it beside
// the replay (model.Capture.Sink); the replay and cut invariants judge the
// sink, the stream ones (Thm 3, Thm 5, exact tags, duplicates) the stream.

import (
	"fmt"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

// checkSink refuses a rule the search cannot carry — one not made by
// model.NewSinkRule — and a model whose initial states do not carry it
// (InitialCaptures gives it to them), rather than check the default in
// its place.
func checkSink[S, A any](m explore.Machine[S, A], rule *model.SinkRule) error {
	if rule.IsLastWriterWins() {
		return nil
	}
	id, ok := rule.ID()
	if !ok || rule.Take == nil {
		return fmt.Errorf("sink rule %q was not made by model.NewSinkRule", rule.Name)
	}
	capOf, err := model.CaptureOf[S]()
	if err != nil {
		return fmt.Errorf("sink rule %s: %w", rule.Name, err)
	}
	for _, s := range m.Init() {
		if capOf(&s).Rule != id {
			return fmt.Errorf("sink rule %s: the model's initial states do not carry it (build them with InitialCaptures)", rule.Name)
		}
	}
	return nil
}
