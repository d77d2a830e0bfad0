package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		{"mutation for another protocol", []string{"check", "classic", "--mutation", "gate-drops-boundary"}, "applies to [parallel], not classic"},
		{"bad seen", []string{"check", "classic", "--seen", "cloud"}, "--seen must be mem or disk"},
		{"bad mem", []string{"check", "classic", "--mem", "lots"}, `--mem: "lots" is not a size`},
		{"list args", []string{"list", "x"}, "takes no arguments"},
		{"unknown invariant", []string{"check", "dump", "--only", "executed-set-membership"}, `dump has no invariant "executed-set-membership"`},
		{"help unknown", []string{"help", "x"}, `unknown command "x"`},
		{"run nothing", []string{"run"}, "expected one or more spec files"},
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
	for _, want := range []string{"classic", "readonly", "parallel", "dump", "composite", "frontier-replay", "window-only-withholding", "sometimes:"} {
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
	if code, _, stderr := runCLI("run", filepath.Join(dir, "missing.json")); code != exitError || !strings.Contains(stderr, "missing.json") {
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
