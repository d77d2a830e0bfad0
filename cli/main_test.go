package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cutcheck/cutcheck/explore"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// Usage errors print exactly one line naming the problem and how to get help.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown flag", []string{"check", "classic", "--frob"}, "unknown flag: --frob"},
		{"bad int", []string{"check", "classic", "--keys", "many"}, `invalid argument "many"`},
		{"no protocol", []string{"check"}, "expected one protocol name"},
		{"unknown protocol", []string{"check", "tlc"}, `unknown protocol "tlc"`},
		{"bound out of range", []string{"check", "classic", "--keys", "99"}, "keys: 99 is out of range"},
		{"unknown mutation", []string{"check", "classic", "--mutation", "nope"}, `unknown mutation "nope"`},
		{"mutation for another protocol", []string{"check", "classic", "--mutation", "gate-drops-boundary"}, "gate-drops-boundary does not apply to classic"},
		{"bad seen", []string{"check", "classic", "--seen", "cloud"}, "--seen must be mem or disk"},
		{"bad mem", []string{"check", "classic", "--mem", "lots"}, `--mem: "lots" is not a size`},
		{"list args", []string{"list", "x"}, "takes no arguments"},
		{"unknown invariant", []string{"check", "dump", "--only", "executed-set-membership"}, `dump has no invariant "executed-set-membership"`},
		{"help unknown", []string{"help", "x"}, `unknown command "x"`},
		{"run nothing", []string{"run"}, "expected one or more spec files"},
		{"whole-server without a key outside", []string{"check", "classic", "--keys", "8", "--chunks", "1", "--whole-server"}, "leaves no key outside the scope"},
		{"whole-server as a mode", []string{"check", "parallel", "--mode", "whole-server"}, "whole-server is not a mode: give whole-server (--whole-server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(tt.args...)
			if code != exitUsage {
				t.Errorf("exit code %d, want %d", code, exitUsage)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, "help") {
				t.Errorf("stderr = %q, want one line containing %q and a pointer to help", stderr, tt.want)
			}
		})
	}
}

func TestHelpVersionList(t *testing.T) {
	if code, out, _ := runCLI("version"); code != exitOK || !strings.HasPrefix(out, "cutcheck ") {
		t.Errorf("version: %d %q", code, out)
	}
	if code, out, _ := runCLI("help"); code != exitOK || !strings.Contains(out, "reproduce") || !strings.Contains(out, "Exit codes") {
		t.Errorf("help: %d %q", code, out)
	}
	if code, out, _ := runCLI("help", "check"); code != exitOK || !strings.Contains(out, "--mutation") || !strings.Contains(out, "--mem") {
		t.Errorf("help check: %d %q", code, out)
	}
	if code, out, _ := runCLI("check", "--help"); code != exitOK || !strings.Contains(out, "--workers") {
		t.Errorf("check --help: %d %q", code, out)
	}
	code, out, _ := runCLI("list")
	if code != exitOK {
		t.Fatalf("list: exit %d", code)
	}
	for _, want := range []string{"classic", "readonly", "parallel", "dump", "composite", "frontier-replay", "window-only-withholding", "sometimes:",
		// every invariant with what its failure costs, shared or a protocol's own
		"final-replay [final]", "no-duplicate-delivery [delivery] (opt-in)", "\n  final-replay               always     final ",
		"\n  reread-terminates          always     claim     [§6.5 (open)] (reread)",
		// the modes a protocol accepts
		"modes:    trusted, uncertain (--mode", "modes:    mixed, tablesync (--mode",
		// the sink's merge rules
		"\n  last-writer-wins, version-max, insert-ignore, upsert-only\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("list output lacks %q", want)
		}
	}
}

// A bad spec file is one line naming the file, the field and the problem.
func TestRunBadSpec(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"unknown-field.json": `{"protocol":"classic","keyz":3,"expect":"pass"}`,
		"bad-protocol.json":  `{"protocol":"tlc","expect":"pass"}`,
		"out-of-range.json":  `{"protocol":"classic","keys":99,"expect":"pass"}`,
		"bad-expect.json":    `{"protocol":"classic","expect":"maybe"}`,
		"not-json.json":      `protocol: classic`,
	} {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI("run", file)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, file) {
			t.Errorf("%s: exit %d, stderr %q", name, code, stderr)
		}
	}
	if code, _, stderr := runCLI("run", filepath.Join(dir, "missing.json")); code != exitUsage || !strings.Contains(stderr, "missing.json") {
		t.Errorf("missing file: exit %d, stderr %q", code, stderr)
	}
}

// check's verdicts map to the documented exit codes, and a counterexample
// is printed and saved as text, JSON and HTML.
func TestCheckEndToEnd(t *testing.T) {
	small := []string{"--keys", "2", "--values", "1", "--events", "2", "--progress", "0"}
	if code, out, stderr := runCLI(append([]string{"check", "classic"}, small...)...); code != exitOK || !strings.Contains(out, "verdict:     pass") {
		t.Errorf("pass: exit %d\n%s%s", code, out, stderr)
	}
	dir := t.TempDir()
	js, trace, html := filepath.Join(dir, "r.json"), filepath.Join(dir, "t.json"), filepath.Join(dir, "t.html")
	args := append([]string{"check", "parallel", "--chunks", "2", "--mutation", "window-only-withholding", "--only", "frontier-replay",
		"--json", js, "--trace-json", trace, "--html", html}, small...)
	code, out, stderr := runCLI(args...)
	if code != exitViolated {
		t.Fatalf("violation: exit %d\n%s%s", code, out, stderr)
	}
	for _, want := range []string{"Counterexample (12 steps)", "violated: frontier-replay", "replayed 1, expected σ_2 = ⊥"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{js, trace, html} {
		if fi, err := os.Stat(f); err != nil || fi.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	if code, _, _ := runCLI(append([]string{"check", "classic", "--max-depth", "2"}, small...)...); code != exitIncomplete {
		t.Errorf("max-depth: exit %d, want %d", code, exitIncomplete)
	}
}

// Reference: issue 10, findings 3, 4 and 7. Stray arguments, sizes that
// are not whole positive byte counts, too short a progress interval and
// unusable output paths are usage errors, found before any search.
func TestStrictArguments(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// parallel at its defaults takes a minute: these must fail at once.
	slow := []string{"check", "parallel", "--progress", "0"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"version args", []string{"version", "extra"}, `version: takes no arguments, got "extra"`},
		{"help args", []string{"help", "check", "run"}, "takes at most one command name"},
		{"clean args", []string{"clean", "x"}, "takes no arguments"},
		{"mem NaN", append(slow, "--mem", "NaN"), `--mem: "NaN" is not a size`},
		{"mem Inf", append(slow, "--mem", "Inf"), `--mem: "Inf" is not a size`},
		{"mem overflow", append(slow, "--mem", "1e19B"), `--mem: "1e19B" is too large`},
		{"mem fraction", append(slow, "--mem", "0.5B"), `--mem: "0.5B" is not a whole number of bytes`},
		{"mem zero", append(slow, "--mem", "0GiB"), `--mem: "0GiB" is not a positive size`},
		{"mem floor", append(slow, "--mem", "64MiB"), "--mem: 64MiB is below 128MiB"},
		{"progress", append(slow, "--progress", "1ns"), "--progress must be 0 (no progress lines) or at least 100ms, got 1ns"},
		{"html dir", append(slow, "--html", dir), "--html: " + dir + " is a directory"},
		{"json under a file", append(slow, "--json", filepath.Join(file, "r.json")), "--json: cannot create the directory for"},
		{"trace-json dir", append(slow, "--trace-json", dir), "--trace-json: " + dir + " is a directory"},
		{"out is a file", []string{"reproduce", "--out", file}, "--out: " + file + " is a file; give a directory"},
		{"no quick specs", []string{"reproduce", "--quick", "--specs", writeSpecs(t, map[string]string{"a.json": `{"protocol":"classic","expect":"pass"}`})}, `--quick: none of the 1 specs is marked "quick"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			code, stdout, stderr := runCLI(tt.args...)
			if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and one line with %q", code, stderr, exitUsage, tt.want)
			}
			if stdout != "" || time.Since(start) > 5*time.Second {
				t.Errorf("ran before refusing (%v): %q", time.Since(start), stdout)
			}
		})
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("refused runs left files: %v", ents)
	}
}

// writeSpecs makes a directory of spec files.
func writeSpecs(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Reference: issue 10, findings 2, 3 and 8. A bad spec anywhere in the
// set is refused with exit 2 and one line before any spec runs.
func TestBadSetRefused(t *testing.T) {
	good := `{"protocol":"classic","keys":1,"values":1,"events":1,"chunks":1,"expect":"pass"}`
	bad := map[string]string{
		"unchecked":   `{"protocol":"dump","expect":"executed-set-membership"}`,
		"no-mutation": `{"protocol":"readonly","expect":"single-read-point"}`,
		"trailing":    `{"protocol":"classic","expect":"pass"} {}`,
		"capitals":    `{"PROTOCOL":"classic","expect":"pass"}`,
		"twice":       `{"protocol":"classic","expect":"pass","expect":"pass"}`,
		"empty":       ``,
		"array":       `[]`,
	}
	for name, body := range bad {
		t.Run(name, func(t *testing.T) {
			dir := writeSpecs(t, map[string]string{"a-good.json": good, "z-" + name + ".json": body})
			code, stdout, stderr := runCLI("run", filepath.Join(dir, "a-good.json"), filepath.Join(dir, "z-"+name+".json"))
			if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "z-"+name+".json") {
				t.Errorf("run: exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			out := filepath.Join(t.TempDir(), "results")
			code, stdout, stderr = runCLI("reproduce", "--specs", dir, "--out", out)
			if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, filepath.Join(dir, "z-"+name+".json")) {
				t.Errorf("reproduce: exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("reproduce made %s", out)
			}
		})
	}
	missing := filepath.Join(t.TempDir(), "nope")
	if code, _, stderr := runCLI("reproduce", "--specs", missing); code != exitUsage || !strings.Contains(stderr, "--specs: there is no directory "+missing) {
		t.Errorf("missing --specs: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runCLI("reproduce", "--specs", t.TempDir()); code != exitUsage || !strings.Contains(stderr, "no spec files (*.json) there") {
		t.Errorf("empty --specs: exit %d, %q", code, stderr)
	}
}

// Reference: issue 10, finding 7. help prints each default once.
func TestHelpDefaults(t *testing.T) {
	for _, cmd := range []string{"check", "run", "reproduce", "clean"} {
		_, out, _ := runCLI("help", cmd)
		for _, line := range strings.Split(out, "\n") {
			if strings.Count(line, "(default") > 1 || strings.Contains(line, "default -1") {
				t.Errorf("help %s prints a default twice: %s", cmd, line)
			}
		}
	}
}

// cancelOn is a writer that calls cancel once what was written contains
// pattern: a way to interrupt a command at a chosen point.
type cancelOn struct {
	bytes.Buffer
	pattern string
	cancel  func()
}

func (c *cancelOn) Write(p []byte) (int, error) {
	n, err := c.Buffer.Write(p)
	if strings.Contains(c.String(), c.pattern) {
		c.cancel()
	}
	return n, err
}

// interruptOn makes the next command's context end once its stdout shows
// pattern, as if Ctrl-C were pressed then.
func interruptOn(t *testing.T, pattern string) *cancelOn {
	ctx, cancel := context.WithCancel(context.Background())
	old := interrupted
	interrupted = func() (context.Context, context.CancelFunc) { return ctx, cancel }
	t.Cleanup(func() { interrupted = old; cancel() })
	return &cancelOn{pattern: pattern, cancel: cancel}
}

// snapshot reads every file under dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		files[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// smallSpecs are three quick specs, two of them mutated.
var smallSpecs = map[string]string{
	"a-classic.json":  `{"protocol":"classic","keys":1,"values":1,"events":1,"chunks":1,"expect":"pass"}`,
	"b-mutated.json":  `{"protocol":"classic","keys":2,"values":2,"events":2,"chunks":2,"mutation":"early-release","expect":"closed-unit-cut"}`,
	"c-mutated2.json": `{"protocol":"classic","keys":2,"values":1,"events":2,"chunks":2,"mutation":"no-discard","expect":"frontier-replay"}`,
}

// Reference: issue 10, finding 1. An interrupted reproduce, in the specs
// or in the kill matrix, leaves --out byte for byte as it was and writes
// what it finished to --out.partial; a complete one replaces the results
// and removes the partial ones.
func TestReproduceInterrupted(t *testing.T) {
	specsDir := writeSpecs(t, smallSpecs)
	out := filepath.Join(t.TempDir(), "results")
	old := map[string]string{"table.md": "old table\n", "kill-matrix.md": "old matrix\n", "traces/old.txt": "old trace\n"}
	for name, body := range old {
		os.MkdirAll(filepath.Dir(filepath.Join(out, name)), 0o755)
		if err := os.WriteFile(filepath.Join(out, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, out)
	for _, tt := range []struct {
		name, at, note string
	}{
		{"specs", "a-classic ", "the run stopped after 1 of 3 specs"},
		{"kill matrix", "b-mutated: killed", "every spec ran, but the kill matrix stopped after 1 rows"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout := interruptOn(t, tt.at)
			var stderr bytes.Buffer
			code := run([]string{"reproduce", "--specs", specsDir, "--out", out, "--progress", "0"}, stdout, &stderr)
			if code != exitIncomplete {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr.String())
			}
			if got := snapshot(t, out); !reflect.DeepEqual(got, before) {
				t.Errorf("%s changed:\n%v\nwas\n%v", out, got, before)
			}
			table, err := os.ReadFile(filepath.Join(out+".partial", "table.md"))
			if err != nil || !strings.HasPrefix(string(table), "**Partial results**: "+tt.note) {
				t.Errorf("partial table: %v\n%s", err, table)
			}
			if strings.Contains(string(table), "MISMATCH") || strings.Contains(string(table), "incomplete") {
				t.Errorf("the interrupted spec is in the partial table:\n%s", table)
			}
			if !strings.Contains(stderr.String(), "what finished is in "+out+".partial") {
				t.Errorf("stderr does not say where: %s", stderr.String())
			}
		})
	}
	code, stdout, stderr := runCLI("reproduce", "--specs", specsDir, "--out", out, "--progress", "0")
	if code != exitOK {
		t.Fatalf("complete run: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, line := range []string{"a-classic ", "b-mutated: killed; fails:", "c-mutated2: killed; fails:", "results written to " + out} {
		if !strings.Contains(stdout, line) {
			t.Errorf("stdout lacks %q:\n%s", line, stdout)
		}
	}
	got := snapshot(t, out)
	for _, f := range []string{"table.md", "table.json", "kill-matrix.md", "kill-matrix.json", "traces/b-mutated.txt", "traces/c-mutated2.html", "manifest.json"} {
		if _, ok := got[filepath.Join(out, f)]; !ok {
			t.Errorf("%s missing after a complete run", f)
		}
	}
	// One set: the old set's files are gone, its trace included.
	if len(got) != 4+3*2+1 {
		t.Errorf("%d files after a complete run (old or staged files left?): %v", len(got), got)
	}
	if _, err := os.Stat(out + ".partial"); !os.IsNotExist(err) {
		t.Errorf("partial results kept after a complete run: %v", err)
	}
}

// Reference: issue 10, finding 6. clean, and every run before it starts,
// removes the directories of killed runs from --dir and says so.
func TestCleanOrphans(t *testing.T) {
	dir := t.TempDir()
	orphan := func() string {
		p, err := os.MkdirTemp(dir, "cutcheck-")
		if err != nil {
			t.Fatal(err)
		}
		// The mark of a run whose process is gone: an id, no lock.
		if err := os.WriteFile(filepath.Join(p, "owner"), []byte("999999999\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := orphan()
	code, stdout, _ := runCLI("clean", "--dir", dir)
	if code != exitOK || !strings.Contains(stdout, "removed "+p) || !strings.Contains(stdout, "process 999999999") {
		t.Errorf("clean: exit %d, %q", code, stdout)
	}
	if code, stdout, _ = runCLI("clean", "--dir", dir); code != exitOK || !strings.Contains(stdout, "nothing to remove") {
		t.Errorf("clean again: exit %d, %q", code, stdout)
	}
	p = orphan()
	code, _, stderr := runCLI("check", "classic", "--keys", "1", "--chunks", "1", "--events", "1", "--dir", dir, "--progress", "0")
	if code != exitOK || !strings.Contains(stderr, "cutcheck: removed "+p) {
		t.Errorf("check: exit %d, stderr %q", code, stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left %v", ents)
	}
}

// Reference: issue 21, finding 9, and the README's Exit codes table. Every
// command's classes of outcome map to the table's codes; a usage error (2)
// is refused before anything runs, in one line.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	tiny := []string{"--keys", "1", "--values", "1", "--events", "1", "--chunks", "1", "--progress", "0"}
	small := []string{"--keys", "2", "--values", "1", "--events", "2", "--progress", "0"}
	pass := writeSpecs(t, map[string]string{"a.json": `{"protocol":"classic","keys":2,"values":1,"events":2,"chunks":1,"expect":"pass"}`})
	wrong := writeSpecs(t, map[string]string{"a.json": `{"protocol":"classic","keys":1,"values":1,"events":1,"chunks":1,"expect":"closed-unit-cut"}`})
	violated := writeSpecs(t, map[string]string{"a.json": `{"protocol":"classic","keys":2,"values":1,"events":2,"chunks":2,"mutation":"early-release","expect":"pass"}`})
	specFile := filepath.Join(pass, "a.json")
	bundle := filepath.Join("..", "certify", "testdata")
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"no command", nil, exitUsage},
		{"unknown command", []string{"frob"}, exitUsage},
		{"version", []string{"version"}, exitOK},
		{"version args", []string{"version", "x"}, exitUsage},
		{"help", []string{"help", "run"}, exitOK},
		{"help unknown", []string{"help", "frob"}, exitUsage},
		{"list", []string{"list"}, exitOK},
		{"list args", []string{"list", "x"}, exitUsage},

		{"check pass", append([]string{"check", "classic"}, tiny...), exitOK},
		{"check violated", append([]string{"check", "classic", "--mutation", "early-release"}, small...), exitViolated},
		{"check max-depth", append([]string{"check", "classic", "--max-depth", "2"}, small...), exitIncomplete},
		{"check simulate finds nothing", append([]string{"check", "classic", "--simulate", "--walks", "3"}, tiny...), exitIncomplete},
		{"check simulate check-symmetry", append([]string{"check", "classic", "--simulate", "--check-symmetry"}, tiny...), exitUsage},
		{"check unknown flag", []string{"check", "classic", "--frob"}, exitUsage},
		{"check unknown protocol", []string{"check", "tlc"}, exitUsage},
		{"check bound out of range", []string{"check", "classic", "--keys", "99"}, exitUsage},
		{"check past the action limit", []string{"check", "parallel", "--keys", "8", "--values", "8", "--events", "24", "--chunks", "4", "--txn", "3"}, exitUsage},
		{"check --dir a file", append([]string{"check", "classic", "--dir", file}, tiny...), exitUsage},
		{"check --json a directory", append([]string{"check", "classic", "--json", dir}, tiny...), exitUsage},
		{"check --bundle without a discipline", append([]string{"check", "composite", "--mode", "tablesync", "--bundle", filepath.Join(dir, "b")}, tiny...), exitUsage},
		{"check shard pass", append([]string{"check", "classic", "--shard", "0/1", "--shard-dir", filepath.Join(dir, "shards")}, tiny...), exitOK},
		{"check shard holds a violation", append([]string{"check", "classic", "--mutation", "early-release", "--shard", "0/1", "--shard-dir", filepath.Join(dir, "shards")}, small...), exitViolated},
		{"run shard holds a violation", []string{"run", filepath.Join(violated, "a.json"), "--shard", "0/1", "--shard-dir", filepath.Join(dir, "shards"), "--progress", "0"}, exitViolated},

		{"run pass", []string{"run", specFile, "--progress", "0"}, exitOK},
		{"run verdict differs", []string{"run", filepath.Join(wrong, "a.json"), "--progress", "0"}, exitViolated},
		{"run max-depth", []string{"run", specFile, "--max-depth", "2", "--progress", "0"}, exitIncomplete},
		{"run missing spec file", []string{"run", missing + ".json"}, exitUsage},
		{"run directory", []string{"run", dir}, exitUsage},
		{"run bad spec", []string{"run", file}, exitUsage},
		{"run nothing", []string{"run"}, exitUsage},

		{"reproduce", []string{"reproduce", "--specs", pass, "--out", filepath.Join(dir, "r1"), "--progress", "0"}, exitOK},
		{"reproduce verdict differs", []string{"reproduce", "--specs", wrong, "--out", "", "--progress", "0"}, exitViolated},
		{"reproduce max-depth", []string{"reproduce", "--specs", pass, "--out", filepath.Join(dir, "r2"), "--max-depth", "2", "--progress", "0"}, exitIncomplete},
		{"reproduce missing specs", []string{"reproduce", "--specs", missing}, exitUsage},
		{"reproduce specs a file", []string{"reproduce", "--specs", file}, exitUsage},
		{"reproduce out a file", []string{"reproduce", "--specs", pass, "--out", file}, exitUsage},
		{"reproduce out the current directory", []string{"reproduce", "--specs", pass, "--out", "."}, exitUsage},
		{"reproduce args", []string{"reproduce", "x"}, exitUsage},

		{"clean", []string{"clean", "--dir", dir, "--out", filepath.Join(dir, "results")}, exitOK},
		{"clean dir a file", []string{"clean", "--dir", file}, exitUsage},
		{"clean dir missing", []string{"clean", "--dir", missing}, exitUsage},
		{"clean args", []string{"clean", "x"}, exitUsage},

		{"merge missing", []string{"merge", missing}, exitUsage},
		{"merge a file", []string{"merge", file}, exitUsage},

		{"certify missing bundle", []string{"certify", missing}, exitUsage},
		{"certify a directory", []string{"certify", bundle}, exitUsage},
		{"certify no bundle", []string{"certify"}, exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			code, stdout, stderr := runCLI(tt.args...)
			if code != tt.want {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.want, stdout, stderr)
			}
			if code == exitUsage && tt.args != nil && (strings.Count(stderr, "\n") != 1 || strings.Contains(stdout, "checking") || time.Since(start) > 5*time.Second) {
				t.Errorf("a usage error must be one line, before anything runs: %v, stdout %q, stderr %q", time.Since(start), stdout, stderr)
			}
		})
	}
	// A reproduce stopped by --max-depth is no set of results: only partial.
	if _, err := os.Stat(filepath.Join(dir, "r2")); !os.IsNotExist(err) {
		t.Errorf("reproduce --max-depth wrote a set of results: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "r2.partial", "table.md")); err != nil || !strings.Contains(string(data), "stopped at --max-depth") {
		t.Errorf("reproduce --max-depth: partial table %v %q", err, data)
	}
	if os.Getuid() != 0 { // root reads every file
		unreadable := filepath.Join(dir, "unreadable.json")
		if err := os.WriteFile(unreadable, []byte(`{"protocol":"classic","expect":"pass"}`), 0); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := runCLI("run", unreadable); code != exitUsage || !strings.Contains(stderr, "permission denied") {
			t.Errorf("unreadable spec file: exit %d, %q", code, stderr)
		}
	}
}

// Reference: issue 21, finding 7. results/ is one set: a complete run
// replaces it whole (see TestReproduceInterrupted), with a manifest whose
// checksums are the files'; --quick and --specs write elsewhere by default;
// a swap killed between its renames is undone by the next run or clean,
// which also remove staging that killed runs left; a spec's name must be
// a file name.
func TestResultsOneSet(t *testing.T) {
	specsDir := writeSpecs(t, map[string]string{
		"q.json": `{"protocol":"classic","keys":1,"values":1,"events":1,"chunks":1,"expect":"pass","quick":true}`,
		"m.json": `{"protocol":"classic","keys":2,"values":1,"events":2,"chunks":2,"mutation":"no-discard","expect":"frontier-replay"}`,
	})
	t.Chdir(t.TempDir())
	if err := os.MkdirAll("results", 0o755); err != nil {
		t.Fatal(err)
	}
	full := map[string]string{"results/table.md": "the full set\n"}
	os.WriteFile("results/table.md", []byte("the full set\n"), 0o644)
	base := filepath.Base(specsDir)
	for _, tt := range []struct {
		args  []string
		out   string
		quick bool
	}{
		{[]string{"--quick"}, "results-" + base + "-quick", true},
		{nil, "results-" + base, false},
	} {
		args := append([]string{"reproduce", "--specs", specsDir, "--progress", "0", "--matrix=false"}, tt.args...)
		if code, stdout, stderr := runCLI(args...); code != exitOK || !strings.Contains(stdout, "results written to "+tt.out) {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		if got := snapshot(t, "results"); !reflect.DeepEqual(got, full) {
			t.Errorf("%v wrote into the full set: %v", args, got)
		}
		data, err := os.ReadFile(filepath.Join(tt.out, "manifest.json"))
		var m manifest
		if err == nil {
			err = json.Unmarshal(data, &m)
		}
		if err != nil {
			t.Fatalf("%s: manifest: %v", tt.out, err)
		}
		if m.Quick != tt.quick || m.Build == "" || m.SpecsDir != specsDir || len(m.Specs) == 0 || m.Specs[0].Name == "" || len(m.Specs[0].Identity) != 16 {
			t.Errorf("%s: manifest %+v", tt.out, m)
		}
		files := snapshot(t, tt.out)
		if len(m.Files) != len(files)-1 {
			t.Errorf("manifest lists %d files, the set holds %d besides it", len(m.Files), len(files)-1)
		}
		for name, sum := range m.Files {
			if sha := sha256.Sum256([]byte(files[filepath.Join(tt.out, name)])); hex.EncodeToString(sha[:]) != sum {
				t.Errorf("%s: checksum in the manifest is not the file's", name)
			}
		}
	}

	// A swap killed after results → results.old-*, before the new set
	// took its place; and staging of killed runs, new and old style.
	dead := "999999999"
	os.Rename("results", "results.old-"+dead+"-1")
	os.MkdirAll("results.new-"+dead+"-2/traces", 0o755)
	live := fmt.Sprintf("results.new-%d-3", os.Getpid())
	os.MkdirAll(live, 0o755)
	code, stdout, _ := runCLI("clean", "--dir", t.TempDir())
	if code != exitOK || !strings.Contains(stdout, "put back results from results.old-"+dead+"-1") || !strings.Contains(stdout, "removed results.new-"+dead+"-2") {
		t.Errorf("clean: exit %d, %q", code, stdout)
	}
	if got := snapshot(t, "results"); !reflect.DeepEqual(got, full) {
		t.Errorf("clean did not put the old set back: %v", got)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("clean removed the staging of a live run: %v", err)
	}
	os.Remove(live)
	os.MkdirAll("results/.staging-123", 0o755)
	if code, stdout, _ = runCLI("clean", "--dir", t.TempDir()); code != exitOK || !strings.Contains(stdout, "removed results/.staging-123") {
		t.Errorf("clean of an old staging directory: exit %d, %q", code, stdout)
	}
	if ents, _ := filepath.Glob("results.*"); len(ents) != 0 {
		t.Errorf("left beside results: %v", ents)
	}

	// Spec names are file names: "..json" would write traces outside the set.
	bad := writeSpecs(t, map[string]string{"..json": `{"protocol":"classic","keys":2,"values":1,"events":2,"chunks":2,"mutation":"no-discard","expect":"frontier-replay"}`})
	for _, args := range [][]string{{"run", filepath.Join(bad, "..json")}, {"reproduce", "--specs", bad, "--out", "odd"}} {
		code, stdout, stderr := runCLI(args...)
		if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, `the spec's name "."`) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	if ents, _ := filepath.Glob("*"); !reflect.DeepEqual(ents, []string{"results", "results-" + base, "results-" + base + "-quick"}) {
		t.Errorf("files made: %v", ents)
	}
}

// Reference: issue 21, finding 12. Every phase says when it starts, and
// progress lines name the spec they are about; a budget above the
// machine's memory and a --with of an invariant checked anyway are usage
// errors.
func TestVoice(t *testing.T) {
	specsDir := writeSpecs(t, map[string]string{"a-classic.json": smallSpecs["a-classic.json"], "c-mutated2.json": smallSpecs["c-mutated2.json"]})
	code, stdout, stderr := runCLI("reproduce", "--specs", specsDir, "--out", "", "--progress", "0")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"kill matrix: 1 mutated specs", "kill matrix: every positive spec again with its copy dropped", "a-classic + copy-dropped: killed"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("reproduce does not say %q:\n%s", want, stdout)
		}
	}

	// Progress lines name what runAll says is running, and it names each
	// spec before running it.
	e := engineFlags{seen: "mem", progress: time.Second}
	var progress bytes.Buffer
	opts, err := e.options(&progress)
	if err != nil {
		t.Fatal(err)
	}
	list, err := loadSpecs(specsDir)
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	opts.Progress, opts.OnProgress = 0, nil // no ticker: called by hand below
	runAll(context.Background(), list, opts, func(name string) { named = append(named, name); e.run(name) }, io.Discard, io.Discard)
	if want := []string{"a-classic", "c-mutated2"}; !reflect.DeepEqual(named, want) {
		t.Errorf("runAll named %v, want %v", named, want)
	}
	e.run("b-mutated")
	if line := progressLine(e.running.Load(), explore.Stats{Depth: 3}); !strings.HasPrefix(line, "progress: b-mutated: depth 3 ") {
		t.Errorf("progress line %q does not name the spec", line)
	}

	tiny := []string{"check", "classic", "--keys", "1", "--values", "1", "--events", "1", "--chunks", "1", "--progress", "0"}
	if total := memTotal(); total > 0 && total < 1<<50 {
		if code, _, stderr := runCLI(append(tiny, "--mem", "1024TiB")...); code != exitUsage || !strings.Contains(stderr, "more than this machine's memory") {
			t.Errorf("--mem past the machine: exit %d, %q", code, stderr)
		}
	}
	if code, _, stderr := runCLI(append(tiny, "--with", "final-replay")...); code != exitUsage || !strings.Contains(stderr, "--with: final-replay is checked without asking") {
		t.Errorf("--with of an invariant checked anyway: exit %d, %q", code, stderr)
	}
	if code, _, _ := runCLI(append(tiny, "--with", "no-duplicate-delivery")...); code != exitOK {
		t.Errorf("--with of an opt-in invariant: exit %d", code)
	}
	with := writeSpecs(t, map[string]string{"w.json": `{"protocol":"classic","keys":1,"values":1,"events":1,"chunks":1,"with":["final-replay"],"expect":"pass"}`})
	if code, _, stderr := runCLI("run", filepath.Join(with, "w.json")); code != exitUsage || !strings.Contains(stderr, `"final-replay" is checked without asking`) {
		t.Errorf("spec with a non-opt-in \"with\": exit %d, %q", code, stderr)
	}
}

// The verdict line says what a violation costs: a final loss names its
// invariant; a transient failure alone is "nothing lost at rest" only when
// --all checked the final invariants to the end.
func TestVerdictConsequence(t *testing.T) {
	bounds := []string{"--keys", "2", "--values", "2", "--events", "2", "--chunks", "1", "--txn", "1", "--progress", "0"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mutation", "early-release"}, "verdict:     violated (transient; the search stopped at it: --all tells whether anything is lost at rest)\n"},
		// --all checks exact-emission too: the early survivors are not the
		// window-discard emission (a claim).
		{[]string{"--mutation", "early-release", "--all"}, "verdict:     violated (transient, claim only: nothing lost at rest)\n"},
		{[]string{"--mutation", "no-discard"}, "verdict:     violated (final: final-replay — the sink is wrong at rest)\n"},
		{[]string{"--mutation", "no-discard", "--all"}, "verdict:     violated (final: final-replay — the sink is wrong at rest)\n"},
		{nil, "verdict:     pass\n"},
	} {
		code, out, _ := runCLI(append(append([]string{"check", "classic"}, bounds...), tc.args...)...)
		if want := map[bool]int{true: exitOK, false: exitViolated}[tc.args == nil]; code != want || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, want %d and %q in\n%s", tc.args, code, want, tc.want, out)
		}
	}
}

// A closed-unit-cut counterexample's picture judges the failing key where
// the invariant does, σ at max(position, hi) of its unit: there the key is
// crossed and the point marked, though σ at the consumer's position agrees
// with the replay.
// Reference: Lemma 4.3, Lemma 6.1
func TestHTMLClosedUnitCut(t *testing.T) {
	html := filepath.Join(t.TempDir(), "cut.html")
	code, out, stderr := runCLI("check", "classic", "--mutation", "early-release", "--keys", "2", "--values", "1", "--events", "2", "--progress", "0", "--html", html)
	m := regexp.MustCompile(`violated: closed-unit-cut .*\n  key k(\d+) of closed unit \d+: replayed \S+, expected σ_(\d+) = (\S+)\n`).FindStringSubmatch(out)
	if code != exitViolated || m == nil {
		t.Fatalf("exit %d, want a closed-unit-cut counterexample\n%s%s", code, out, stderr)
	}
	key, at, sigma := m[1], m[2], m[3]
	page := string(must(os.ReadFile(html)))
	for _, want := range []string{
		`class="wrong-key" data-key="` + key + `" data-at="` + at + `"`,
		"k" + key + "=" + sigma + " ✗",
		`class="judged" data-pos="` + at + `"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %s", want)
		}
	}
}

// Main names the running binary in usage text and errors, so a user's own
// program names itself; the shipped binary, named cutcheck, says exactly
// what run does.
func TestProgramName(t *testing.T) {
	args, name := os.Args, progName
	t.Cleanup(func() { os.Args, progName = args, name })
	main := func(bin string, a ...string) (int, string, string) {
		os.Args, progName = []string{bin}, name
		var out, errb bytes.Buffer
		code := Main(a, &out, &errb)
		return code, out.String(), errb.String()
	}
	for _, a := range [][]string{{"frob"}, {"help"}, {"help", "check"}, {"check", "classic", "--keys", "99"}} {
		code, out, errs := main("/usr/local/bin/cutcheck", a...)
		progName = name
		wcode, wout, werrs := runCLI(a...)
		if code != wcode || out != wout || errs != werrs {
			t.Errorf("cutcheck %v: Main and run differ:\n%d %s%s\n%d %s%s", a, code, out, errs, wcode, wout, werrs)
		}
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"frob"}, `mycheck: unknown command "frob" (run 'mycheck help' for the list)`},
		{[]string{"help"}, "\n  mycheck check "},
		{[]string{"check", "classic", "--keys", "99"}, "mycheck check: classic: keys: 99 is out of range 1..8 (run 'mycheck help check')"},
	}
	for _, tt := range tests {
		_, out, errs := main(filepath.Join("bin", "mycheck"), tt.args...)
		if !strings.Contains(out+errs, tt.want) || strings.Contains(out+errs, "'cutcheck") {
			t.Errorf("mycheck %v: want %q, and no 'cutcheck …' hint:\n%s%s", tt.args, tt.want, out, errs)
		}
	}
}

// Under a sink rule the picture draws what the sink holds, which the
// replay claims judge: an upsert-only sink keeps a deleted row, marked ✗,
// while the stream's replay agrees with σ.
func TestHTMLSinkRule(t *testing.T) {
	html := filepath.Join(t.TempDir(), "sink.html")
	code, out, stderr := runCLI("check", "classic", "--sink", "upsert-only", "--keys", "1", "--values", "1", "--events", "2", "--chunks", "1", "--txn", "1", "--progress", "0", "--html", html)
	if code != exitViolated || !strings.Contains(out, "key k0: sink holds 1, source holds ⊥") {
		t.Fatalf("exit %d, want final-replay on k0\n%s%s", code, out, stderr)
	}
	page := string(must(os.ReadFile(html)))
	for _, want := range []string{`>sink</text>`, `the sink's merge rule</title>upsert-only</text>`, `class="wrong-key" data-key="0"`, "k0=1@1", "k0=⊥ ✗"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %s", want)
		}
	}
}
