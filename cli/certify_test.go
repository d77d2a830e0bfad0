package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	sample        = "../certify/testdata/debezium-customers.jsonl"
	notifications = "../certify/testdata/debezium-customers.notifications.jsonl"
)

// Reference: 003 §8.5: the verdict line and its exit code.
func TestCertifyCommand(t *testing.T) {
	dir := t.TempDir()
	bundle := filepath.Join(dir, "run.jsonl")
	code, out, errs := runCLI("certify", "--from", "debezium", "--table", "customers", "--notifications", notifications, "--write-bundle", bundle, sample)
	if code != exitOK || !strings.HasPrefix(out, "Accept: virtual cut at frontier 12 on scope [−∞, +∞) (3 keys present") || errs != "" {
		t.Fatalf("code %d out %q err %q", code, out, errs)
	}
	// The written bundle certifies on its own, and advances by a segment.
	if code, out, _ := runCLI("certify", bundle); code != exitOK || !strings.HasPrefix(out, "Accept") {
		t.Fatalf("bundle: code %d out %q", code, out)
	}
	seg := filepath.Join(dir, "seg.jsonl")
	os.WriteFile(seg, []byte(`{"format":"cutcheck-segment","version":1,"from":12,"to":14}`+"\n"+`{"p":13,"k":4,"v":null}`+"\n"+`{"p":14,"k":5,"v":{"id":5}}`+"\n"), 0o644)
	code, out, _ = runCLI("certify", "--advance", seg, "--json", bundle)
	var res struct {
		Verdict string
		Cut     struct {
			Frontier int64
			Present  int
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitOK || res.Verdict != "Accept" || res.Cut.Frontier != 14 || res.Cut.Present != 3 {
		t.Fatalf("advance: code %d %+v %v\n%s", code, res, err, out)
	}
	if code, out, _ := runCLI("certify", "--scope", "range=1..3", bundle); code != exitOK || !strings.Contains(out, "2 keys present") {
		t.Errorf("restricted: code %d out %q", code, out)
	}
	code, out, _ = runCLI("certify", "--from", "debezium", "--table", "customers", "../certify/testdata/debezium-customers-stale.jsonl")
	if code != exitViolated || !strings.HasPrefix(out, "Reject: S4 (O2") {
		t.Errorf("stale: code %d out %q", code, out)
	}
	b, _ := os.ReadFile(bundle)
	os.WriteFile(bundle, []byte(strings.Replace(string(b), `"version":1`, `"version":9`, 1)), 0o644)
	if code, out, _ := runCLI("certify", bundle); code != exitUnsupported || !strings.HasPrefix(out, "Unsupported") {
		t.Errorf("unknown version: code %d out %q", code, out)
	}
	if code, _, errs := runCLI("certify", filepath.Join(dir, "missing")); code != exitUsage || errs == "" {
		t.Errorf("missing file: code %d", code)
	}
	if code, _, _ := runCLI("certify"); code != exitUsage {
		t.Errorf("no file: code %d", code)
	}
	if code, _, _ := runCLI("certify", "--from", "oracle", bundle); code != exitUsage {
		t.Errorf("unknown format: code %d", code)
	}
}

// Reference: FORMAT.md "From Debezium": without evidence of the chunk ends
// and the maximum key, the converter certifies the scope the recording
// determines and says what it left out; a recording without a window is
// Unsupported; bad converter flags are usage errors.
func TestCertifyDebeziumEvidence(t *testing.T) {
	code, out, errs := runCLI("certify", "--from", "debezium", "--table", "customers", sample)
	if code != exitOK || !strings.Contains(out, "scope [−∞, 3) ∪ [4, 5)") ||
		!strings.Contains(errs, "cutcheck certify: keys strictly between 2 and 4 are not certified") || !strings.Contains(errs, "cutcheck certify: keys above 4 are not certified") {
		t.Errorf("no bounds: code %d out %q err %q", code, out, errs)
	}
	code, out, errs = runCLI("certify", "--from", "debezium", "--chunk-bounds", "[2,4,null]", "--max-key", "4", sample)
	if code != exitOK || !strings.Contains(out, "scope [−∞, +∞)") || errs != "" {
		t.Errorf("stated bounds: code %d out %q err %q", code, out, errs)
	}
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.jsonl")
	os.WriteFile(plain, []byte(`{"before":null,"after":{"id":1},"op":"c","source":{"connector":"postgresql","table":"customers","sequence":"[\"1\",\"2\"]"}}`+"\n"), 0o644)
	if code, out, _ := runCLI("certify", "--from", "debezium", plain); code != exitUnsupported || !strings.HasPrefix(out, "Unsupported") {
		t.Errorf("no window: code %d out %q", code, out)
	}
	if code, _, errs := runCLI("certify", "--from", "debezium", "--notifications", filepath.Join(dir, "missing"), sample); code != exitError || errs == "" {
		t.Errorf("missing notifications: code %d", code)
	}
	for _, bad := range [][]string{{"--chunk-bounds", "2,4"}, {"--max-key", "{"}, {"--key", "a,"}} {
		if code, _, _ := runCLI(append(append([]string{"certify", "--from", "debezium"}, bad...), sample)...); code != exitUsage {
			t.Errorf("%v: code %d", bad, code)
		}
	}
}

// --mem is a size of at least 64MiB and --progress 0 or at least 100ms;
// the spill directory under --dir is gone when the run ends.
func TestCertifyMem(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []string{"1k", "lots", "0"} {
		code, _, errs := runCLI("certify", "--mem", bad, sample)
		if code != exitUsage || strings.Count(errs, "\n") > 2 || !strings.Contains(errs, "--mem") {
			t.Errorf("--mem %s: code %d err %q", bad, code, errs)
		}
	}
	for _, bad := range []string{"1ns", "-1s", "soon"} {
		code, _, errs := runCLI("certify", "--progress", bad, sample)
		if code != exitUsage || strings.Count(errs, "\n") > 2 || !strings.Contains(errs, "--progress") {
			t.Errorf("--progress %s: code %d err %q", bad, code, errs)
		}
	}
	code, out, _ := runCLI("certify", "--mem", "128MiB", "--dir", dir, "--from", "debezium", "--table", "customers", "--notifications", notifications, sample)
	if code != exitOK || !strings.HasPrefix(out, "Accept") {
		t.Fatalf("code %d out %q", code, out)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("left in --dir: %v", left)
	}
}

// Ctrl-C during certify: the conversion, and the verification of a
// bundle, stop with exit 4 and say so, and nothing is left in --dir.
func TestCertifyInterrupted(t *testing.T) {
	dir := t.TempDir()
	bundle := filepath.Join(dir, "run.jsonl")
	if code, _, _ := runCLI("certify", "--from", "debezium", "--table", "customers", "--notifications", notifications, "--write-bundle", bundle, sample); code != exitOK {
		t.Fatalf("code %d", code)
	}
	spill := t.TempDir()
	for _, args := range [][]string{
		{"--from", "debezium", "--table", "customers", "--notifications", notifications, sample},
		{bundle},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // pressed before the first batch
		old := interrupted
		interrupted = func() (context.Context, context.CancelFunc) { return ctx, cancel }
		code, out, errs := runCLI(append([]string{"certify", "--dir", spill}, args...)...)
		interrupted = old
		if code != exitIncomplete || out != "" || !strings.Contains(errs, "interrupted: nothing certified") {
			t.Errorf("%v: code %d out %q err %q", args, code, out, errs)
		}
		if left, _ := os.ReadDir(spill); len(left) != 0 {
			t.Errorf("%v: left in --dir: %v", args, left)
		}
	}
}

// A recording in several files (a topic a file, a window's rows before its
// close as Debezium sends them) is the one-file recording's cut; a format
// problem is Unsupported (exit 5) naming the file and line, never a Reject;
// a dropped redelivery is named in the Accept line; the signalling table
// of Debezium's documentation is hinted at.
// Reference: README "Debezium recordings".
func TestCertifyDebeziumTopics(t *testing.T) {
	in, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	var table, signals []string
	var rows []string // a window's rows, delivered before its close
	for _, l := range strings.Split(strings.TrimSpace(string(in)), "\n") {
		switch {
		case strings.Contains(l, `"op":"r"`):
			rows = append(rows, l)
			continue
		case len(rows) > 0:
			close := signals[len(signals)-1]
			table, signals = append(table, rows...), signals[:len(signals)-1]
			signals, rows = append(signals, close), nil
		}
		if strings.Contains(l, `"table":"debezium_signal"`) {
			signals = append(signals, l)
		} else {
			table = append(table, l)
		}
	}
	dir := t.TempDir()
	write := func(name string, lines []string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
		return p
	}
	tab, sig := write("customers.jsonl", table), write("signals.jsonl", signals)
	_, want, _ := runCLI("certify", "--from", "debezium", "--notifications", notifications, sample)
	code, out, errs := runCLI("certify", "--from", "debezium", "--table", "public.customers", "--notifications", notifications, sig, tab)
	if code != exitOK || out != want {
		t.Fatalf("two topics: code %d %q %q, want %q", code, out, errs, want)
	}
	bad := write("bad.jsonl", append(append([]string(nil), table...), "garbage"))
	code, out, _ = runCLI("certify", "--from", "debezium", "--notifications", notifications, sig, bad)
	if code != exitUnsupported || !strings.HasPrefix(out, "Unsupported: "+bad+" line "+fmt.Sprint(len(table)+1)) || strings.Contains(out, "Unsupported: Unsupported") || !strings.Contains(out, "field format") {
		t.Errorf("a format problem: code %d %q", code, out)
	}
	again := write("again.jsonl", append(append([]string(nil), table...), table[0]))
	code, out, _ = runCLI("certify", "--from", "debezium", "--notifications", notifications, sig, again)
	if code != exitOK || !strings.Contains(out, "rests on: ") || !strings.Contains(out, "a consumer that applies each source position once: 1 redelivered") {
		t.Errorf("a redelivery: code %d %q", code, out)
	}
	if code, _, _ := runCLI("certify", "--from", "debezium", "--redelivery", "twice", sig, tab); code != exitUsage {
		t.Errorf("--redelivery twice: code %d", code)
	}
	if code, _, _ := runCLI("certify", sig, tab); code != exitUsage {
		t.Errorf("two bundles: code %d", code)
	}
	var renamed []string
	for _, l := range signals {
		renamed = append(renamed, strings.ReplaceAll(l, `"debezium_signal"`, `"debezium_signals"`))
	}
	code, out, _ = runCLI("certify", "--from", "debezium", tab, write("signals2.jsonl", renamed))
	if code != exitUnsupported || !strings.Contains(out, "--signal-table public.debezium_signals") {
		t.Errorf("debezium_signals: code %d %q", code, out)
	}
}

// Reference: issue "certify at production size", scope in the exit code. A
// snapshot stopped after two windows is accepted on the keys it read; with
// --require-scope the Accept exits 1 and names what it left out.
func TestCertifyRequireScope(t *testing.T) {
	b, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	stopped := filepath.Join(t.TempDir(), "stopped.jsonl")
	os.WriteFile(stopped, []byte(strings.Join(lines[:11], "")), 0o644) // up to the second window's row
	const scope = "on scope [−∞, 3) ∪ [4, 5) (3 keys present"
	for _, c := range []struct {
		require string
		code    int
		omitted string
	}{
		{"", exitOK, ""},
		{"all", exitViolated, "[3, 4) ∪ [5, +∞)"},
		{"range=..3", exitOK, ""},
		{"range=2..9", exitViolated, "[3, 4) ∪ [5, 9)"},
		{"keys=1,4,7", exitViolated, "{7}"},
	} {
		args := []string{"certify", "--from", "debezium", "--table", "customers", stopped}
		if c.require != "" {
			args = append(args, "--require-scope", c.require)
		}
		code, out, _ := runCLI(args...)
		want := "narrower than the required scope: " + c.omitted + " is not certified"
		if code != c.code || !strings.HasPrefix(out, "Accept") || !strings.Contains(out, scope) || strings.Contains(out, "narrower") != (c.omitted != "") || c.omitted != "" && !strings.Contains(out, want) {
			t.Errorf("--require-scope %q: code %d, want %d; out %q", c.require, code, c.code, out)
		}
	}
	// The whole recording covers every key.
	if code, out, _ := runCLI("certify", "--from", "debezium", "--table", "customers", "--notifications", notifications, "--require-scope", "all", sample); code != exitOK || strings.Contains(out, "narrower") {
		t.Errorf("whole: code %d out %q", code, out)
	}
	for _, bad := range []string{"range=a..3", "{bad", "range=1"} {
		if code, _, errs := runCLI("certify", "--from", "debezium", "--table", "customers", "--require-scope", bad, stopped); code != exitUsage || !strings.Contains(errs, "--require-scope") {
			t.Errorf("--require-scope %q: code %d err %q", bad, code, errs)
		}
	}
}
