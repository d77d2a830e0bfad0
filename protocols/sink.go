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

// withSink returns m with rule set again on every state its Decode fills
// (the encoding marks only that a rule is set), after checking that m's
// initial states carry it (InitialCaptures gives it to them). Under
// last-writer-wins m is returned as it is.
func withSink[S, A any](m explore.Machine[S, A], rule *model.SinkRule) (explore.Machine[S, A], error) {
	if rule.IsLastWriterWins() {
		return m, nil
	}
	if rule.Take == nil {
		return nil, fmt.Errorf("sink rule %q has no Take", rule.Name)
	}
	capOf, err := model.CaptureOf[S]()
	if err != nil {
		return nil, fmt.Errorf("sink rule %s: %w", rule.Name, err)
	}
	for _, s := range m.Init() {
		if capOf(&s).Rule != rule {
			return nil, fmt.Errorf("sink rule %s: the model's initial states do not carry it (build them with InitialCaptures)", rule.Name)
		}
	}
	return explore.Extend(m, explore.Extra[S, A]{Decoded: func(s *S) { capOf(s).Rule = rule }}), nil
}
