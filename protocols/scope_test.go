package protocols

import (
	"slices"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
)

// Reference: §7.7 (the whole-server log) — every shipped protocol, in every
// mode, skips the events of a key outside its scope: with a whole-server log
// it passes and meets such an event inside a window (where its units have
// one); a capture that forwards them (outside-event-forwarded) passes
// without a whole-server log, so only the outside events catch it, and with
// one it fails frontier-replay, the sink holding a row outside the scope.
func TestWholeServerEveryProtocol(t *testing.T) {
	for _, name := range order {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range append([]string{""}, p.Limits.Modes...) {
			if len(p.Limits.Modes) > 0 && mode == "" {
				continue
			}
			cfg := Config{Keys: 1, Values: 1, Events: 2, Chunks: 1, Txn: 1, Mode: mode}
			t.Run(name+" "+mode, func(t *testing.T) {
				whole := cfg
				whole.WholeServer = true
				rep := checkVariant(t, p, whole, explore.Options{})
				if rep.Verdict != explore.Pass {
					t.Fatalf("whole-server: %v %s", rep.Verdict, rep.Violation.Text(false))
				}
				reached := slices.IndexFunc(rep.Sometimes, func(r explore.Reach) bool { return r.Name == "outside-event-in-window" && r.Reached })
				windowed := !(name == "dump" && mode == DumpTrusted || name == "composite" && mode == CompositeTablesync)
				if windowed != (reached >= 0) {
					t.Errorf("outside-event-in-window reached %v, want %v: %+v", reached >= 0, windowed, rep.Sometimes)
				}
				plain := checkVariant(t, p, Config{Keys: 1, Values: 1, Events: 2, Chunks: 1, Txn: 1, Mode: mode, InitialAny: true, Fault: OutsideEventForwarded}, explore.Options{})
				if plain.Verdict != explore.Pass {
					t.Errorf("outside-event-forwarded without a whole-server log: %v %s", plain.Verdict, plain.Violation.Text(false))
				}
				whole.Fault = OutsideEventForwarded
				bad := checkVariant(t, p, whole, explore.Options{Only: []string{invariants.FrontierReplay.Name}})
				if bad.Verdict != explore.Violated || !strings.Contains(bad.Violation.Reason, "outside the scope") {
					t.Fatalf("outside-event-forwarded on a whole-server log: %v, want frontier-replay to name a key outside the scope", bad.Verdict)
				}
			})
		}
	}
}

// A scope of every key leaves none outside it, and a discipline whose
// capture does not model a log beyond its scope refuses one: both are
// configuration errors, not runs.
func TestWholeServerRefused(t *testing.T) {
	p, _ := Lookup("classic")
	cfg := Config{Keys: model.MaxKeys, Values: 1, Events: 1, Chunks: 1, Txn: 1, WholeServer: true}
	if err := p.Validate(cfg); err == nil {
		t.Error("a whole-server log over a scope of every key accepted")
	}
	q := &Protocol{Name: "narrow", Limits: Limits{Keys: 3, Values: 1, Events: 1, Chunks: 1, Txn: 1}}
	cfg.Keys = 1
	if err := q.Validate(cfg); err == nil || !strings.Contains(err.Error(), "whole-server") {
		t.Errorf("a protocol without Limits.WholeServer: %v", err)
	}
}

// Reference: §7.7, §7.4 A-discard — a release that waits for a processed
// offset moved only by captured rows passes without a whole-server log (the
// offset is the consumer's position) and, with one, releases a window whose
// last transaction is another table's only after the consumer has passed
// its high edge: the copy of a row deleted just beyond it comes back.
func TestReadonlyOffsetOnCapturedRows(t *testing.T) {
	p, _ := Lookup("readonly")
	cfg := Config{Keys: 2, Values: 1, Events: 3, Chunks: 1, Txn: 1, InitialAny: true, Fault: OffsetOnCapturedRows}
	if rep := checkVariant(t, p, cfg, explore.Options{}); rep.Verdict != explore.Pass {
		t.Fatalf("without a whole-server log: %v %s", rep.Verdict, rep.Violation.Text(false))
	}
	cfg.WholeServer, cfg.InitialAny = true, false
	rep := checkVariant(t, p, cfg, explore.Options{Only: []string{invariants.FrontierReplay.Name}})
	if rep.Verdict != explore.Violated || len(rep.Violation.Steps)-1 != 11 {
		t.Fatalf("with one: %v, want frontier-replay in 11 steps", rep.Verdict)
	}
}
