package protocols

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/certify"
	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
)

// The verifier of recorded runs (package certify, seeds 003/004) against the
// model checker, on the shipped protocols' own reachable states: at every
// state where every unit has closed and the consumer is at or past the latest
// high edge, the run written as an evidence bundle (its log, the plan it
// recorded, its start, its position as frontier, and the discipline's
// emission over that plan) is accepted exactly when the protocol's contract
// invariant and the discipline's start bound (S-OBS) hold; a rejection names
// the obligation the model finds failing; and an accepted cut is what the
// protocol's frontier-replay invariant compares against.
type certified[S, A any] struct {
	explore.Model[S, A]
	capture    func(s *S) *model.Capture
	units      int
	discipline string
	restrict   bool           // also certify each accepted run restricted to k0
	rejected   map[string]int // by certify clause; written from the engine's goroutines
	mu         chan struct{}
}

func (c certified[S, A]) Done(s *S) bool { return c.Model.(explore.Doner[S]).Done(s) }

func (c certified[S, A]) Properties() []explore.Property[S, A] {
	return []explore.Property[S, A]{{Name: "certify-agrees", Kind: explore.Always, Check: func(s *S) string {
		clause, reason := certifyAgrees(c.capture(s), c.units, c.discipline, c.restrict)
		if clause != "" {
			c.mu <- struct{}{}
			c.rejected[clause]++
			<-c.mu
		}
		return reason
	}}}
}

// certifyAgrees checks one state; clause is certify's clause when it
// rejected, reason is non-empty when certify and the model disagree.
func certifyAgrees(c *model.Capture, units int, discipline string, restrict bool) (clause, reason string) {
	if !c.AllClosed(units) || c.Pos < c.Plan.LatestHigh() {
		return "", ""
	}
	p := c.Plan
	p.Frontier = c.Pos
	var stream model.Stream
	sobs := true
	for i := 0; i < int(p.N); i++ {
		bound := p.Units[i].Lo
		if discipline == certify.RangeMerge {
			bound = p.Units[i].Hi
		}
		sobs = sobs && c.Start <= bound
	}
	switch discipline {
	case certify.RangeMerge:
		stream = model.RangeMerge(&p, &c.Log, c.Start, c.Pos)
	case certify.PointSplice:
		stream, _ = model.PointSplice(&p, &c.Log, c.Start, c.Pos)
	default:
		stream = model.WindowDiscard(&p, &c.Log, c.Start, c.Pos)
	}
	var buf bytes.Buffer
	if err := certify.WriteModelBundle(&buf, certify.ModelRun{Log: &c.Log, Plan: &c.Plan, Start: c.Start, Frontier: c.Pos, Discipline: discipline, Stream: stream}); err != nil {
		return "", err.Error()
	}
	b := buf.Bytes()
	res, err := certify.Verify(bytes.NewReader(b), certify.Options{})
	if err != nil {
		return "", err.Error()
	}
	contract := invariants.CheckContract(c, units)
	switch {
	case res.Verdict == certify.Accept && (contract != "" || !sobs):
		return "", fmt.Sprintf("certify accepts, the model says contract %q, S-OBS %v", contract, sobs)
	case res.Verdict == certify.Accept:
		// Theorem 1: the certified cut is σ_f, which frontier replay compares
		// the protocol's own replay with.
		if got, want := stream.Replay(), c.Log.State(c.Pos); got != want {
			return "", fmt.Sprintf("accepted, but the discipline's prefix replays to %v, not σ_f %v", got, want)
		}
		if !restrict {
			return "", ""
		}
		// Restricted to k0 (003 §11.3): accepted, the whole accepted too,
		// and the cut there is σ_f(k0).
		sub, err := certify.Verify(bytes.NewReader(b), certify.Options{Restrict: &certify.ScopeSpec{Keys: []json.RawMessage{json.RawMessage("0")}}, KeepState: true})
		if err != nil {
			return "", err.Error()
		}
		want := "null"
		if v := c.Log.State(c.Pos)[0]; v != model.Absent {
			want = fmt.Sprint(int(v))
		}
		got, ok := sub.Cut.State["0"]
		if !ok {
			got = "null"
		}
		if sub.Verdict != certify.Accept || sub.Full == nil || sub.Full.Verdict != certify.Accept || got != want {
			return "", fmt.Sprintf("restricted to k0: %s, σ_f(k0) = %s", sub.Line(), want)
		}
		return "", ""
	case res.Verdict != certify.Reject:
		return "", "certify: " + res.Line()
	case contract == "" && sobs:
		return res.Failure.Clause, "certify rejects a run the model finds wellformed: " + res.Line()
	case contract != "":
		// The same obligation: the model's message starts with it.
		ob, _, _ := strings.Cut(contract, " ")
		ob = strings.TrimSuffix(ob, ":")
		if ob == "bracket" {
			ob = "brackets"
		}
		if !strings.Contains(res.Failure.Clause, ob) {
			return res.Failure.Clause, fmt.Sprintf("the model's contract fails (%s) but certify names %q", contract, res.Failure.Clause)
		}
	}
	return res.Failure.Clause, ""
}

func crossCheck[S, A any](t *testing.T, name string, m explore.Model[S, A], capture func(*S) *model.Capture, units int, discipline string) map[string]int {
	t.Helper()
	return crossCheckWith(t, name, m, capture, units, discipline, false)
}

func crossCheckWith[S, A any](t *testing.T, name string, m explore.Model[S, A], capture func(*S) *model.Capture, units int, discipline string, restrict bool) map[string]int {
	t.Helper()
	c := certified[S, A]{Model: m, capture: capture, units: units, discipline: discipline, restrict: restrict, rejected: map[string]int{}, mu: make(chan struct{}, 1)}
	r, err := explore.Run(context.Background(), c, explore.Options{Workers: 2, NoDeadlock: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != explore.Pass {
		t.Fatalf("%s: %s\n%s", name, r.Violation.Reason, wdTrace[S, A](m, r.Violation))
	}
	t.Logf("%s: %d states, rejected by clause %v", name, r.Stats.Distinct, c.rejected)
	return c.rejected
}

// Reference: 003 §9 (accepted certificates are virtual cuts), Thm 1, §6 —
// every reachable state of every shipped protocol at small bounds, and the
// protocols' plan-breaking mutations rejected for the obligation they break.
func TestCertifyCrossCheck(t *testing.T) {
	small := Config{Keys: 2, Values: 1, Events: 2, Chunks: 2, Txn: 1, InitialAny: true}
	with := func(c Config, f func(*Config)) Config { f(&c); return c }
	classicCap := func(s *classicState) *model.Capture { return &s.Cap }
	readonlyCap := func(s *readonlyState) *model.Capture { return &s.Cap }
	parallelCap := func(s *parallelState) *model.Capture { return &s.Cap }
	dumpCap := func(s *dumpState) *model.Capture { return &s.Cap }
	compositeCap := func(s *compositeState) *model.Capture { return &s.Cap }

	for _, tt := range []struct {
		name string
		run  func(t *testing.T) map[string]int
		want string // a clause some state must be rejected for; "" = none may be
	}{
		{"classic", func(t *testing.T) map[string]int {
			return crossCheck(t, "classic", newClassic(small), classicCap, 2, certify.WindowDiscard)
		}, ""},
		{"classic overlapping-chunks", func(t *testing.T) map[string]int {
			return crossCheck(t, "classic", newClassic(with(small, func(c *Config) { c.Fault = OverlappingChunks })), classicCap, 2, certify.WindowDiscard)
		}, "O1"},
		{"classic scan-skips-row", func(t *testing.T) map[string]int {
			return crossCheck(t, "classic", newClassic(with(small, func(c *Config) { c.Fault = ScanSkipsRow })), classicCap, 2, certify.WindowDiscard)
		}, "O2"},
		{"classic late-start", func(t *testing.T) map[string]int {
			return crossCheck(t, "classic", newClassic(with(small, func(c *Config) { c.Fault = LateStart })), classicCap, 2, certify.WindowDiscard)
		}, "S-OBS"},
		{"classic two-event transactions", func(t *testing.T) map[string]int {
			return crossCheckWith(t, "classic", newClassic(with(small, func(c *Config) { c.Txn = 2 })), classicCap, 2, certify.WindowDiscard, true)
		}, ""},
		{"readonly", func(t *testing.T) map[string]int {
			return crossCheck(t, "readonly", newReadonly(with(small, func(c *Config) { c.Txn = 2 })), readonlyCap, 2, certify.WindowDiscard)
		}, ""},
		{"parallel", func(t *testing.T) map[string]int {
			return crossCheck(t, "parallel", newParallel(small, ParallelParts{}), parallelCap, 2, certify.RangeMerge)
		}, ""},
		{"parallel high-before-read", func(t *testing.T) map[string]int {
			return crossCheck(t, "parallel", newParallel(with(small, func(c *Config) { c.Fault = HighBeforeRead }), ParallelParts{}), parallelCap, 2, certify.RangeMerge)
		}, "O2"},
		{"dump trusted", func(t *testing.T) map[string]int {
			return crossCheckWith(t, "dump", newDump(with(small, func(c *Config) { c.Chunks, c.Mode = 1, DumpTrusted })), dumpCap, 1, certify.PointSplice, true)
		}, ""},
		{"dump uncertain", func(t *testing.T) map[string]int {
			return crossCheck(t, "dump", newDump(with(small, func(c *Config) { c.Chunks, c.Mode = 1, DumpUncertain })), dumpCap, 1, certify.WindowDiscard)
		}, ""},
		{"dump false-recovery-point", func(t *testing.T) map[string]int {
			return crossCheck(t, "dump", newDump(with(small, func(c *Config) { c.Chunks, c.Mode, c.Fault = 1, DumpTrusted, FalseRecoveryPoint })), dumpCap, 1, certify.PointSplice)
		}, "O2"},
		{"composite", func(t *testing.T) map[string]int {
			return crossCheck(t, "composite", newComposite(with(small, func(c *Config) { c.Mode = "mixed" })), compositeCap, 2, certify.WindowDiscard)
		}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rejected := tt.run(t)
			switch {
			case tt.want == "" && len(rejected) > 0:
				t.Errorf("the published protocol's runs were rejected: %v", rejected)
			case tt.want != "":
				found := false
				for clause := range rejected {
					found = found || strings.Contains(clause, tt.want)
				}
				if !found {
					t.Errorf("no state rejected for %s (rejections %v): the cross-check did not reach the fault", tt.want, rejected)
				}
			}
		})
	}
}

// streamOf rebuilds the stream a trace emitted from its replays, step by
// step: each key whose replayed entry changed was emitted, in key order
// (every protocol emits at most one entry per key in one step).
func streamOf[S, A any](v *explore.Violation[S, A], capture func(*S) *model.Capture) model.Stream {
	var out model.Stream
	for i := 1; i < len(v.Trace); i++ {
		a, b := capture(&v.Trace[i-1].State), capture(&v.Trace[i].State)
		for k := model.Key(0); k < model.Key(model.MaxKeys); k++ {
			if a.Out.Val[k] != b.Out.Val[k] || a.Out.Tag[k] != b.Out.Tag[k] {
				out = append(out, model.Entry{Key: k, Val: b.Out.Val[k], Tag: b.Out.Tag[k]})
			}
		}
	}
	return out
}

// rejectsTrace checks that the run a stream fault's shortest frontier-replay
// counterexample recorded — its log, plan and the stream it really emitted —
// is rejected, for not being the discipline's emission or for its cut.
func rejectsTrace[S, A any](t *testing.T, m explore.Model[S, A], capture func(*S) *model.Capture, discipline string) {
	t.Helper()
	only := wdOnly[S, A]{m, []string{invariants.FrontierReplay.Name}}
	r, err := explore.Run(context.Background(), only, explore.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != explore.Violated {
		t.Fatalf("%v: no counterexample", r.Verdict)
	}
	c := capture(&r.Violation.Trace[len(r.Violation.Trace)-1].State)
	var buf bytes.Buffer
	run := certify.ModelRun{Log: &c.Log, Plan: &c.Plan, Start: c.Start, Frontier: c.Pos, Discipline: discipline, Stream: streamOf(r.Violation, capture)}
	if err := certify.WriteModelBundle(&buf, run); err != nil {
		t.Fatal(err)
	}
	res, err := certify.Verify(&buf, certify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != certify.Reject || !strings.Contains(res.Failure.Clause, "emission") && !strings.Contains(res.Failure.Clause, "cut") {
		t.Fatalf("certify: %s\n%s", res.Line(), wdTrace[S, A](m, r.Violation))
	}
	t.Logf("%s", res.Line())
}

// Reference: 003 §9, Def. 6.2 — the stream faults' counterexamples, as
// recorded runs, are rejected for their emission.
func TestCertifyRejectsStreamFaults(t *testing.T) {
	cfg := func(f Fault) Config {
		return Config{Keys: 2, Values: 2, Events: 2, Chunks: 2, Txn: 1, Fault: f}
	}
	classicCap := func(s *classicState) *model.Capture { return &s.Cap }
	for _, f := range []Fault{NoDiscard, LowEdgeOffByOne, HighEdgeOffByOne, CopyDropped} {
		t.Run("classic "+f.String(), func(t *testing.T) {
			rejectsTrace(t, newClassic(cfg(f)), classicCap, certify.WindowDiscard)
		})
	}
	readonlyCap := func(s *readonlyState) *model.Capture { return &s.Cap }
	for _, f := range []Fault{NoDiscard, ConsumerRunsDuringRead, CopyDropped} {
		t.Run("readonly "+f.String(), func(t *testing.T) {
			c := cfg(f)
			c.Chunks = 1
			rejectsTrace(t, newReadonly(c), readonlyCap, certify.WindowDiscard)
		})
	}
	dumpCap := func(s *dumpState) *model.Capture { return &s.Cap }
	for _, f := range []Fault{NoDiscard, CopyDropped} {
		t.Run("dump "+f.String(), func(t *testing.T) {
			c := cfg(f)
			c.Chunks, c.Mode = 1, DumpUncertain
			rejectsTrace(t, newDump(c), dumpCap, certify.WindowDiscard)
		})
	}
	t.Run("composite copy-dropped", func(t *testing.T) {
		c := cfg(CopyDropped)
		c.Mode = "mixed"
		rejectsTrace(t, newComposite(c), func(s *compositeState) *model.Capture { return &s.Cap }, certify.WindowDiscard)
	})
}
