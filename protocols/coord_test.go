package protocols_test

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
)

// seenTags is what the tag-recording rule has seen: the smallest and the
// largest tag of an entry, over every run since the last reset.
var seenLow, seenHigh atomic.Uint32

// recordTags is version-max (§6.5, the tag as the version) that records the
// tags it is offered.
var recordTags = model.NewSinkRule("version-max-recording", true, func(_ model.Value, tag model.Offset, e model.Offered, _ bool) bool {
	for low := seenLow.Load(); uint32(e.Tag) < low && !seenLow.CompareAndSwap(low, uint32(e.Tag)); low = seenLow.Load() {
	}
	for high := seenHigh.Load(); uint32(e.Tag) > high && !seenHigh.CompareAndSwap(high, uint32(e.Tag)); high = seenHigh.Load() {
	}
	return e.Tag >= tag
})

// coordConfig is a small run of p in mode: two keys, three row events (two
// under the race detector), two chunks (one for dump, Thm 8).
func coordConfig(p *protocols.Protocol, mode string) protocols.Config {
	cfg := protocols.Config{Keys: 2, Values: 2, Events: 3, Chunks: 2, Txn: min(2, p.Limits.Txn), Mode: mode}
	if protocols.RaceEnabled {
		cfg.Events = 2
	}
	if p.Limits.Chunks < 2 || p.Name == "dump" {
		cfg.Chunks = 1
	}
	return cfg
}

// Reference: Def. 2.1 (a coordinate is a prefix length, whatever number the
// log gives its positions). For every registered protocol and mode, under
// the default sink, version-max and a version-max that records the tags it
// is offered, the run whose positions start at 8, 254 or 65534 has the
// counts, depth, verdict, coverage and reached properties of the run from 1
// — and the rule is offered the positions as the log names them: none
// below the base less one (nothing held yet), some past the base plus the
// events less one, across 9 → 10, 255 → 256 and 65535 → 65536.
func TestCoordBaseEqualCounts(t *testing.T) {
	for _, p := range protocols.All() {
		modes := p.Limits.Modes
		if len(modes) == 0 {
			modes = []string{""}
		}
		for _, mode := range modes {
			for _, sink := range []*model.SinkRule{model.LastWriterWins, model.VersionMax, recordTags} {
				cfg := coordConfig(p, mode)
				cfg.Sink = sink
				t.Run(p.Name+" "+cfg.String(), func(t *testing.T) {
					want := coordRun(t, p, cfg)
					for _, base := range []int{8, 254, 65534} {
						c := cfg
						c.CoordBase = base
						seenLow.Store(^uint32(0))
						seenHigh.Store(0)
						got := coordRun(t, p, c)
						if !reflect.DeepEqual(got, want) {
							t.Errorf("coord-base %d:\n got  %s\n want %s", base, got, want)
						}
						if sink != recordTags || !strings.HasPrefix(want, "pass") {
							continue // a failing run stops before it has seen every entry
						}
						if low, high := seenLow.Load(), seenHigh.Load(); low < uint32(base-1) || high < uint32(base+cfg.Events-1) {
							t.Errorf("coord-base %d: the rule was offered tags %d..%d, want none below %d and one at least %d", base, low, high, base-1, base+cfg.Events-1)
						}
					}
				})
			}
		}
	}
}

// coordRun is what a run's state graph decides: verdict, counts, depth,
// coverage, the reached properties, and the counterexample's length.
func coordRun(t *testing.T, p *protocols.Protocol, cfg protocols.Config) string {
	t.Helper()
	r, err := p.Check(context.Background(), cfg, explore.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	s := fmt.Sprintf("%s generated=%d distinct=%d depth=%d coverage=%v", r.VerdictName, r.Stats.Generated, r.Stats.Distinct, r.Stats.Depth, r.Coverage)
	for _, q := range r.Sometimes {
		s += fmt.Sprintf(" %s:%v@%d", q.Name, q.Reached, q.Depth)
	}
	if r.Violation != nil {
		s += fmt.Sprintf(" violation %s in %d steps", r.Violation.Property, len(r.Violation.Steps))
	}
	return s
}

// Reference: §6.5 version-max, with the tag as the version; Prop 3 (a
// stale entry must not overwrite a newer one). A user's version-max that
// compares tags as decimal text passes while every position is one digit
// and loses an update once the positions cross 9 → 10; one that keeps a
// byte of the tag passes at 8 and loses one across 255 → 256. The shipped
// version-max passes at every base.
func TestCoordBaseUserRules(t *testing.T) {
	text := model.NewSinkRule("version-max-as-text", true, func(_ model.Value, tag model.Offset, e model.Offered, _ bool) bool {
		return strconv.FormatUint(uint64(e.Tag), 10) >= strconv.FormatUint(uint64(tag), 10)
	})
	byteWide := model.NewSinkRule("version-max-in-a-byte", true, func(_ model.Value, tag model.Offset, e model.Offered, _ bool) bool {
		return uint8(e.Tag) >= uint8(tag)
	})
	p, err := protocols.Lookup("parallel")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		rule *model.SinkRule
		base int
		want string
	}{
		{model.VersionMax, 1, "pass"}, {model.VersionMax, 8, "pass"}, {model.VersionMax, 254, "pass"},
		{text, 1, "pass"}, {text, 8, "violated"},
		{byteWide, 1, "pass"}, {byteWide, 8, "pass"}, {byteWide, 254, "violated"},
	} {
		cfg := protocols.Config{Keys: 1, Values: 2, Events: 3, Chunks: 1, Txn: 1, Sink: tt.rule, CoordBase: tt.base}
		r, err := p.Check(context.Background(), cfg, explore.Options{Only: []string{"final-replay"}})
		if err != nil {
			t.Fatal(err)
		}
		if r.VerdictName != tt.want {
			t.Errorf("%s at coord-base %d: %s, want %s", tt.rule.Name, tt.base, r.VerdictName, tt.want)
		}
		if r.Violation != nil && !strings.Contains(fmt.Sprint(r.Violation.Steps), "@"+strconv.Itoa(tt.base)) {
			t.Errorf("%s at coord-base %d: the trace does not show the positions from %d", tt.rule.Name, tt.base, tt.base)
		}
	}
}
