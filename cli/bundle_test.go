package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cutcheck/cutcheck/certify"
	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
	"github.com/cutcheck/cutcheck/specs"
)

// bundleClauses is, for each mutated spec whose protocol has a bundle form,
// the clause certify names for its counterexample's run ("" for Accept: the
// property the mutation breaks is not one of the cut's — a shared read
// instant, a latest-high or shared-witness trajectory, a duplicate delivery,
// an entry for a key outside the scope, a redundant copy (runOf rebuilds
// the stream from the replays, so an entry that changes nothing is not in
// the bundle) —
// and the run is a virtual cut). A window still open at the counterexample's end is a
// bracket reaching past the recorded log.
var bundleClauses = map[string]string{
	"mut-backfill-from-read-parallel":         "emission",
	"mut-begin-tagged-events-classic":         "materialization", // the lying tag comes before any chunk
	"mut-consumer-runs-during-read-composite": "emission",
	"mut-event-delivered-twice-classic":       "frontier at or after every high edge",
	"mut-marker-only-from-stream-classic":     "emission",
	"mut-witness-by-bracket-only-composite":   "", // a claimed witness, not the cut
	"mut-claim-inside-uncertainty-dump":       "",
	"mut-consumer-runs-during-read-dump":      "emission",
	"mut-consumer-runs-during-read-readonly":  "emission",
	"mut-copy-dropped-classic":                "emission",
	"mut-copy-dropped-composite":              "emission",
	"mut-copy-dropped-dump":                   "emission",
	"mut-copy-dropped-parallel":               "emission",
	"mut-copy-dropped-readonly":               "emission",
	"mut-early-release-classic":               "frontier at or after every high edge",
	"mut-false-recovery-point-dump":           "O2",
	"mut-gate-drops-boundary-parallel":        "emission",
	"mut-gate-passes-high-parallel":           "",
	"mut-redundant-copy-classic":              "",
	"mut-redundant-copy-parallel":             "",
	"mut-gate-repeats-window-parallel":        "frontier at or after every high edge",
	"mut-high-before-read-parallel":           "O3",
	"mut-high-edge-off-by-one-classic":        "emission",
	"mut-high-edge-off-by-one-parallel":       "emission",
	"mut-interior-executed-set-readonly":      "frontier at or after every high edge",
	"mut-late-start-classic":                  "S-OBS",
	"mut-late-start-composite":                "S-OBS",
	"mut-lost-watermark-classic":              "O1", // the next chunk never starts
	"mut-low-edge-off-by-one-classic":         "emission",
	"mut-low-edge-off-by-one-parallel":        "emission",
	"mut-no-discard-classic":                  "emission",
	"mut-no-discard-dump":                     "emission",
	"mut-no-discard-readonly":                 "emission",
	"mut-offset-on-captured-rows-readonly":    "emission",
	"mut-overlapping-chunks-classic":          "brackets inside the log",
	"mut-overlapping-chunks-parallel":         "O1",
	"mut-outside-event-forwarded-classic":     "", // the cut is the scope's: certify compares the in-scope entries only
	"mut-outside-event-forwarded-composite":   "",
	"mut-outside-event-forwarded-dump":        "",
	"mut-outside-event-forwarded-parallel":    "",
	"mut-outside-event-forwarded-readonly":    "",
	"mut-reader-before-backfill-parallel":     "emission",
	"mut-release-before-last-row-readonly":    "frontier at or after every high edge",
	"mut-scan-skips-row-classic":              "O2",
	"mut-scan-skips-row-parallel":             "O2",
	"mut-shared-read-instant-readonly":        "",
	"mut-skipped-backfill-parallel":           "emission",
	"mut-split-transaction-readonly":          "materialization", // the counterexample ends before any chunk
	"mut-window-only-withholding-parallel":    "emission",
}

// Every mutated spec's counterexample, written as a bundle (check --bundle),
// is certified: Reject naming the clause the mutation breaks; and the same
// run with its stream replaced by the discipline's own emission — the stream
// fault undone — is accepted when the clause was the emission's, and still
// rejected for the same clause when the fault is in the plan.
func TestMutationBundles(t *testing.T) {
	list, err := specs.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, s := range list {
		if !strings.HasPrefix(s.Name, "mut-") {
			continue
		}
		cfg, _, err := s.Config()
		if err != nil {
			t.Fatal(err)
		}
		p, err := protocols.Lookup(s.Protocol)
		if err != nil {
			t.Fatal(err)
		}
		d, noBundle := p.Discipline(cfg.Mode)
		want, listed := bundleClauses[s.Name]
		if noBundle != nil {
			if listed {
				t.Errorf("%s: listed, but %s %s has no bundle form", s.Name, s.Protocol, cfg.Mode)
			}
			continue
		}
		if !listed {
			t.Errorf("%s: no expected clause: add it to bundleClauses", s.Name)
			continue
		}
		seen++
		t.Run(s.Name, func(t *testing.T) {
			o, err := specs.Run(context.Background(), s, explore.Options{Workers: 2})
			if err != nil || o.Report.Violation == nil {
				t.Fatalf("no counterexample: %v %v", o.Got, err)
			}
			r, err := runOf(o.Report.Violation, d)
			if err != nil {
				t.Fatal(err)
			}
			res := certifyRun(t, r)
			switch {
			case want == "" && res.Verdict != certify.Accept:
				t.Fatalf("got %s, want Accept (%s is no cut property)", res.Line(), s.Expect)
			case want != "" && (res.Verdict != certify.Reject || !strings.Contains(res.Failure.Clause, want)):
				t.Fatalf("got %s, want a Reject naming %q", res.Line(), want)
			}
			r.Stream = emission(r)
			undone := certifyRun(t, r)
			switch {
			case want == "" || want == "emission":
				if undone.Verdict != certify.Accept {
					t.Fatalf("with the discipline's own emission: %s, want Accept", undone.Line())
				}
			case undone.Verdict != certify.Reject || !strings.Contains(undone.Failure.Clause, want):
				t.Fatalf("with the discipline's own emission: %s, want the plan's fault %q still", undone.Line(), want)
			}
		})
	}
	if seen < 25 {
		t.Errorf("only %d mutated specs have a bundle form", seen)
	}
}

func certifyRun(t *testing.T, r certify.ModelRun) *certify.Result {
	t.Helper()
	var b bytes.Buffer
	if err := certify.WriteModelBundle(&b, r); err != nil {
		t.Fatal(err)
	}
	res, err := certify.Verify(&b, certify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func emission(r certify.ModelRun) model.Stream {
	switch r.Discipline {
	case certify.RangeMerge:
		return model.RangeMerge(r.Plan, r.Log, r.Start, r.Frontier)
	case certify.PointSplice:
		s, _ := model.PointSplice(r.Plan, r.Log, r.Start, r.Frontier)
		return s
	}
	return model.WindowDiscard(r.Plan, r.Log, r.Start, r.Frontier)
}

// check --bundle writes the counterexample's run, which certify rejects; a
// protocol mode without a bundle form is a usage error, and a passing check
// writes no bundle.
func TestCheckBundleFlag(t *testing.T) {
	dir := t.TempDir()
	b := filepath.Join(dir, "run.jsonl")
	code, out, errOut := runCLI("check", "classic", "--keys", "2", "--values", "2", "--events", "2", "--chunks", "2", "--txn", "1",
		"--mutation", "no-discard", "--only", "frontier-replay", "--bundle", b)
	if code != exitViolated {
		t.Fatalf("check: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI("certify", b)
	if code != exitViolated || !strings.Contains(out, "window-discard emission") {
		t.Fatalf("certify the counterexample: exit %d %s", code, out)
	}
	if code, _, errOut := runCLI("check", "composite", "--mode", "tablesync", "--bundle", b); code != exitUsage || !strings.Contains(errOut, "--bundle") {
		t.Fatalf("tablesync --bundle: exit %d %s", code, errOut)
	}
	pass := filepath.Join(dir, "pass.jsonl")
	if code, out, errOut := runCLI("check", "classic", "--keys", "1", "--values", "1", "--events", "1", "--chunks", "1", "--bundle", pass); code != exitOK {
		t.Fatalf("passing check: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(pass); !os.IsNotExist(err) {
		t.Fatalf("a passing check wrote a bundle: %v", err)
	}
}

// certify's Accept line says what it rests on; under --scope, whether the
// full certificate was accepted; under --advance, that the cut is
// conditional on the segment; a segment that contradicts the bundle's log
// is a Reject (exit 1).
func TestCertifyWording(t *testing.T) {
	dir := t.TempDir()
	var l model.Log
	l.Commit(model.Event{Key: 0, Img: 1})
	l.Commit(model.Event{Key: 1, Img: 1})
	l.Commit(model.Event{Key: 0, Img: 2})
	p := &model.Plan{Keys: 2, Frontier: 2}
	p.Add(model.Unit{Domain: model.Range(0, 1), Lo: 0, Hi: 1, Refresh: model.Store{0: 1}, Read: model.Range(0, 1)})
	p.Add(model.Unit{Domain: model.Range(1, 2), Lo: 1, Hi: 1, Read: model.Range(1, 2)})
	var b bytes.Buffer
	if err := certify.WriteModelBundle(&b, certify.ModelRun{Log: &l, Plan: p, Frontier: 2, Discipline: certify.WindowDiscard, Stream: model.WindowDiscard(p, &l, 0, 2)}); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(dir, "run.jsonl")
	os.WriteFile(bundle, b.Bytes(), 0o644)
	code, out, _ := runCLI("certify", bundle)
	if code != exitOK || !strings.Contains(out, "rests on: faithful source observation") {
		t.Fatalf("certify: exit %d %s", code, out)
	}
	// k1's read is made stale: the whole is rejected, {k0} accepted.
	stale := filepath.Join(dir, "stale.jsonl")
	os.WriteFile(stale, bytes.Replace(b.Bytes(), []byte(`{"read":1,"k":0,"v":1}`), []byte(`{"read":1,"k":0,"v":7}`), 1), 0o644)
	if code, out, _ := runCLI("certify", "--scope", "keys=1", stale); code != exitOK || !strings.Contains(out, "sub-scope only: the full certificate is Reject") {
		t.Fatalf("--scope on a rejected certificate: exit %d %s", code, out)
	}
	seg := filepath.Join(dir, "seg.jsonl")
	os.WriteFile(seg, []byte(`{"format":"cutcheck-segment","version":1,"from":2,"to":4}`+"\n"+`{"p":3,"k":0,"v":2}`+"\n"+`{"p":4,"k":1,"v":null}`+"\n"), 0o644)
	if code, out, _ := runCLI("certify", "--advance", seg, bundle); code != exitOK || !strings.Contains(out, "advanced from the certified frontier 2") || !strings.Contains(out, "ContSeg") {
		t.Fatalf("--advance: exit %d %s", code, out)
	}
	os.WriteFile(seg, []byte(`{"format":"cutcheck-segment","version":1,"from":2,"to":4}`+"\n"+`{"p":3,"k":0,"v":5}`+"\n"+`{"p":4,"k":1,"v":null}`+"\n"), 0o644)
	if code, out, _ := runCLI("certify", "--advance", seg, bundle); code != exitViolated || !strings.HasPrefix(out, "Reject: ContSeg") {
		t.Fatalf("--advance, a segment contradicting the log: exit %d %s", code, out)
	}
}

var variantsOnce sync.Once

// registerVariants registers classic under other names, as a user's
// program does: classic-renamed through Extend, classic-keeps-all as a
// variant whose merge rule never discards; and steps-declared, a model
// whose state holds no model.Capture that declares a discipline anyway.
func registerVariants() {
	variantsOnce.Do(func() {
		mustRegister(protocols.Extend(protocols.Classic(protocols.ClassicParts{}), protocols.Extension{Name: "classic-renamed"}))
		p := protocols.Classic(protocols.ClassicParts{Discard: func(protocols.MergeEvent) bool { return false }})
		p.Name = "classic-keeps-all"
		mustRegister(p)
		one := protocols.Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}
		mustRegister(protocols.Define(&protocols.Protocol{
			Name:        "steps-declared",
			Defaults:    one,
			Limits:      protocols.Limits{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1},
			Disciplines: map[string]string{"": protocols.WindowDiscard},
		}, func(protocols.Config) explore.Model[stepsState, int] { return steps{} }))
	})
}

// A variant keeps the discipline of the protocol it is built from, whatever
// its name: its counterexample, written with --bundle, is a bundle certify
// judges, and rejects for the emission clause (Def. 6.2).
// Reference: §6.2, Def. 6.2
func TestVariantBundles(t *testing.T) {
	registerVariants()
	bounds := []string{"--keys", "2", "--values", "2", "--events", "2", "--chunks", "2", "--txn", "1", "--progress", "0", "--only", "frontier-replay"}
	tests := []struct {
		name string
		args []string
	}{
		{"extended, with a mutation", []string{"classic-renamed", "--mutation", "no-discard"}},
		{"renamed, with a merge rule that keeps all", []string{"classic-keeps-all"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bundle := filepath.Join(t.TempDir(), "run.bundle")
			args := append(append(append([]string{"check"}, tt.args...), bounds...), "--bundle", bundle)
			if code, out, errs := runCLI(args...); code != exitViolated {
				t.Fatalf("check: exit %d, want %d\n%s%s", code, exitViolated, out, errs)
			}
			code, out, errs := runCLI("certify", bundle)
			if code != exitViolated || !strings.HasPrefix(out, "Reject") || !strings.Contains(out, "emission") {
				t.Fatalf("certify: exit %d, want a Reject naming the emission\n%s%s", code, out, errs)
			}
		})
	}
}

// A protocol with no evidence-bundle form is refused before anything runs,
// in one line saying why — not blaming its mode.
func TestBundleRefused(t *testing.T) {
	registerSteps()
	registerVariants()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"steps-without-symmetry"}, "steps-without-symmetry declares no emission discipline"},
		{[]string{"steps-declared"}, "steps-declared's state holds no model.Capture"},
		{[]string{"composite", "--mode", protocols.CompositeTablesync}, `composite declares no emission discipline for mode "tablesync"`},
	}
	for _, tt := range tests {
		args := append(append([]string{"check"}, tt.args...), "--bundle", filepath.Join(t.TempDir(), "b"))
		code, out, errs := runCLI(args...)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and one line with %q", tt.args, code, out, errs, exitUsage, tt.want)
		}
	}
}

// protocols names the disciplines as certify does.
func TestDisciplineNames(t *testing.T) {
	if protocols.WindowDiscard != certify.WindowDiscard || protocols.RangeMerge != certify.RangeMerge || protocols.PointSplice != certify.PointSplice {
		t.Fatal("protocols and certify name the disciplines differently")
	}
}
