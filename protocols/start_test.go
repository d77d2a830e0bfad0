package protocols

import (
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

// ReaderStartAt pins the live reader's start where ReaderStart only bounds
// it: pinned at the minimum high the published capture passes over fewer
// states than with every start up to it; pinned at the largest high it
// loses the smaller-high chunk's later events, and the trace names the
// start as the variant's.
func TestReaderStartExact(t *testing.T) {
	cfg := Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1}
	opts := explore.Options{Workers: 1}
	bound, err := Parallel(ParallelParts{}).Check(t.Context(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	atMin, err := Parallel(ParallelParts{ReaderStartAt: func(p model.Plan) model.Coord { return MinHigh(&p) }}).Check(t.Context(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if bound.Verdict != explore.Pass || atMin.Verdict != explore.Pass || atMin.Stats.Distinct >= bound.Stats.Distinct {
		t.Errorf("bound: %v %d states; exact at the minimum high: %v %d states", bound.Verdict, bound.Stats.Distinct, atMin.Verdict, atMin.Stats.Distinct)
	}
	maxHigh := func(p model.Plan) model.Coord {
		h := model.Coord(0)
		for i := 0; i < int(p.N); i++ {
			h = max(h, p.Units[i].Hi)
		}
		return h
	}
	late, err := Parallel(ParallelParts{ReaderStartAt: maxHigh}).Check(t.Context(), cfg, explore.Options{Workers: 1, Only: []string{"final-replay"}})
	if err != nil {
		t.Fatal(err)
	}
	if late.Violation == nil {
		t.Fatalf("exact start at the largest high: %v, want final-replay violated", late.Verdict)
	}
	found := false
	for _, st := range late.Violation.Steps {
		found = found || strings.Contains(st.Action, "the variant's ReaderStartAt, exact")
	}
	if !found {
		t.Errorf("the trace does not name the variant's start:\n%s", late.Violation.Text(false))
	}
}
