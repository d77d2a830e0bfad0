package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
)

// --symmetry counts classic-2's bounds up to value renaming: the summary
// says so, and 21,024 states (bfClassic's count in protocols) fall to
// 10,516 classes; without it the count
// is concrete and no symmetry line is printed.
func TestCheckSymmetry(t *testing.T) {
	args := []string{"check", "classic", "--keys", "2", "--values", "2", "--events", "2", "--chunks", "1", "--txn", "1", "--initial", "any", "--progress", "0"}
	for _, tt := range []struct {
		flag     []string
		distinct string
		line     bool
	}{{nil, "21024", false}, {[]string{"--symmetry"}, "10516", true}} {
		code, out, stderr := runCLI(append(args, tt.flag...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s%s", tt.flag, code, out, stderr)
		}
		if got := regexp.MustCompile(`(?m)^distinct: +(\d+)`).FindStringSubmatch(out); got == nil || got[1] != tt.distinct {
			t.Errorf("%v: distinct %v, want %s\n%s", tt.flag, got, tt.distinct, out)
		}
		if strings.Contains(out, "symmetry:    on") != tt.line {
			t.Errorf("%v: symmetry line printed: %v, want %v\n%s", tt.flag, !tt.line, tt.line, out)
		}
	}
}

// --symmetry asked of a protocol that declares none is a usage error that
// says so; the same run without it passes.
func TestCheckSymmetryAskedOfModelWithout(t *testing.T) {
	registerSteps()
	code, out, stderr := runCLI("check", "steps-without-symmetry", "--symmetry", "--progress", "0")
	if code != exitUsage || !strings.Contains(stderr, "--symmetry: steps-without-symmetry declares no symmetry") {
		t.Errorf("exit %d, stderr %q, stdout %q", code, stderr, out)
	}
	if code, out, stderr := runCLI("check", "steps-without-symmetry", "--progress", "0"); code != exitOK || !strings.Contains(out, "distinct:    3") {
		t.Errorf("without --symmetry: exit %d\n%s%s", code, out, stderr)
	}
}

// --symmetry with exact-emission is refused for what it is: the stream's
// digest mixes values, not a protocol without symmetry.
func TestSymmetryRefusedWithEmission(t *testing.T) {
	code, _, stderr := runCLI("check", "classic", "--keys", "2", "--values", "2", "--events", "2", "--with", "exact-emission", "--symmetry", "--progress", "0")
	if code != exitUsage || !strings.Contains(stderr, "--symmetry: exact-emission keeps a digest") || strings.Contains(stderr, "declares no symmetry") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// --symmetry with --shard is a usage error: shards split concrete states.
func TestSymmetryNotSharded(t *testing.T) {
	for _, args := range [][]string{
		{"check", "classic", "--symmetry", "--shard", "0/2", "--shard-dir", t.TempDir()},
		{"run", "--symmetry", "--shard", "0/2", "--shard-dir", t.TempDir(), "../specs/classic-1.json"},
	} {
		if code, _, stderr := runCLI(args...); code != exitUsage || !strings.Contains(stderr, "--symmetry and --shard cannot be combined") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// mustRegister registers a test's protocol, whose name is its own.
func mustRegister(p *protocols.Protocol) {
	if err := protocols.Register(p); err != nil {
		panic(err)
	}
}

var stepsOnce sync.Once

// registerSteps registers a three-state protocol with no symmetry.
func registerSteps() {
	stepsOnce.Do(func() {
		one := protocols.Config{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1}
		mustRegister(protocols.Define(&protocols.Protocol{
			Name:     "steps-without-symmetry",
			Doc:      "a counter to 2",
			Defaults: one,
			Limits:   protocols.Limits{Keys: 1, Values: 1, Events: 1, Chunks: 1, Txn: 1},
		}, func(protocols.Config) explore.Model[stepsState, int] { return steps{} }))
	})
}

type stepsState struct{ N uint8 }

type steps struct{}

func (steps) Init() []stepsState { return []stepsState{{}} }
func (steps) Actions(s *stepsState, buf []int) []int {
	if s.N < 2 {
		buf = append(buf, 0)
	}
	return buf
}
func (steps) Next(s *stepsState, _ int, t *stepsState) bool   { t.N++; return true }
func (steps) Properties() []explore.Property[stepsState, int] { return nil }
func (steps) Encode(s *stepsState, buf []byte) []byte         { return append(buf, s.N) }
func (steps) Decode(b []byte, s *stepsState) error {
	if len(b) != 1 {
		return fmt.Errorf("steps: %d bytes", len(b))
	}
	*s = stepsState{b[0]}
	return nil
}
func (steps) Describe(*stepsState, int) string { return "step" }
func (steps) ActionNames() []string            { return []string{"step"} }
func (steps) ActionKind(int) int               { return 0 }
func (steps) Done(s *stepsState) bool          { return s.N == 2 }

var twoOnce sync.Once

// registerTwo registers two classic variants whose window is off by one
// only when the chunk read the value 2: classic-two as a user would write
// it, and classic-two-blind, which declares that window value-blind.
func registerTwo() {
	twoOnce.Do(func() {
		window := func(u model.Unit) model.Window {
			w := u.Window()
			for k := range model.Key(model.MaxKeys) {
				if u.Read.Has(k) && u.Refresh[k] == 2 {
					w.Lo++
					break
				}
			}
			return w
		}
		p := protocols.Classic(protocols.ClassicParts{Window: window})
		p.Name = "classic-two"
		mustRegister(p)
		p = protocols.Classic(protocols.ClassicParts{Window: window, ValueBlind: true})
		p.Name = "classic-two-blind"
		mustRegister(p)
	})
}

// A variant with a part that receives values fails final-replay; asked to
// count it up to value renaming, which would hide that, check refuses with
// a usage error naming the part. Declared value-blind, --check-symmetry
// finds the declaration false (exit 3); on classic it passes with the
// concrete count. --check-symmetry with --symmetry is a usage error.
func TestCheckSymmetryFlag(t *testing.T) {
	registerTwo()
	bounds := []string{"--keys", "2", "--values", "2", "--events", "2", "--chunks", "1", "--txn", "1", "--progress", "0"}
	for _, c := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"classic-two"}, exitViolated, "final-replay", ""},
		{[]string{"classic-two", "--symmetry"}, exitUsage, "", "--symmetry: classic-two has no symmetry: its part Window receives values"},
		{[]string{"classic-two-blind", "--check-symmetry"}, exitError, "", "the model's symmetry does not hold"},
		{[]string{"classic", "--initial", "any", "--check-symmetry"}, exitOK, "distinct:    21024", ""},
		{[]string{"classic", "--symmetry", "--check-symmetry"}, exitUsage, "", "cannot be combined with --symmetry"},
	} {
		code, out, stderr := runCLI(append(append([]string{"check"}, c.args...), bounds...)...)
		if code != c.code || !strings.Contains(out, c.stdout) || !strings.Contains(stderr, c.stderr) || strings.Count(stderr, "\n") > 1 {
			t.Errorf("%v: exit %d, want %d\nstdout %s\nstderr %s", c.args, code, c.code, out, stderr)
		}
	}
}

// A spec asking for value renaming of a variant whose part sees values is
// a usage error, as --symmetry is for check (exit 2, naming the part).
func TestSpecSymmetryRefused(t *testing.T) {
	registerTwo()
	file := filepath.Join(t.TempDir(), "two.json")
	if err := os.WriteFile(file, []byte(`{"protocol": "classic-two", "keys": 2, "values": 2, "events": 2, "chunks": 1, "txn": 1, "symmetry": true, "expect": "final-replay"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI("run", "--progress", "0", file)
	if code != exitUsage || !strings.Contains(stderr, "its part Window receives values") {
		t.Errorf("run: exit %d, want %d naming the part\n%s", code, exitUsage, stderr)
	}
}

// A spec's "check-symmetry" is honoured by run and reproduce: on a variant
// that declares a value-blind window it is not, the check fails (exit 3),
// as --check-symmetry does. With symmetry asked the other way (flag or
// field), or a spec's "symmetry" with --shard, it is a usage error.
func TestSpecCheckSymmetry(t *testing.T) {
	registerTwo()
	dir := t.TempDir()
	bounds := `"keys": 2, "values": 2, "events": 2, "chunks": 1, "txn": 1`
	write := func(name, body string) string {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	blind := write("blind.json", `{"protocol": "classic-two-blind", `+bounds+`, "check-symmetry": true, "expect": "final-replay"}`)
	check := write("check.json", `{"protocol": "classic", `+bounds+`, "check-symmetry": true, "expect": "pass"}`)
	sym := write("sym.json", `{"protocol": "classic", `+bounds+`, "symmetry": true, "expect": "pass"}`)
	both := write("both.json", `{"protocol": "classic", `+bounds+`, "symmetry": true, "check-symmetry": true, "expect": "pass"}`)
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"run", blind}, exitError, "the model's symmetry does not hold"},
		{[]string{"run", check}, exitOK, ""},
		{[]string{"run", "--symmetry", check}, exitUsage, "spec check: check-symmetry explores every concrete state; it cannot be combined with symmetry"},
		{[]string{"run", "--check-symmetry", sym}, exitUsage, "spec sym: check-symmetry explores every concrete state"},
		{[]string{"run", both}, exitUsage, `field "check-symmetry": explores every concrete state; it cannot be combined with "symmetry"`},
		{[]string{"run", "--shard", "0/2", "--shard-dir", t.TempDir(), sym}, exitUsage, `spec sym asks for "symmetry", which --shard cannot use`},
		{[]string{"reproduce", "--specs", dir, "--symmetry", "--out", ""}, exitUsage, "spec check: check-symmetry explores every concrete state"},
	} {
		if c.args[0] == "reproduce" {
			os.Remove(both)
			os.Remove(blind)
		}
		code, out, stderr := runCLI(append(c.args, "--progress", "0")...)
		if code != c.code || !strings.Contains(stderr, c.stderr) || strings.Count(stderr, "\n") > 1 {
			t.Errorf("%v: exit %d, want %d\nstdout %s\nstderr %s", c.args, code, c.code, out, stderr)
		}
	}
}
