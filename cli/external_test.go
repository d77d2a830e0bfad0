package cli

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// userMain is a user's whole program: a variant of a shipped protocol,
// registered under its own name, with cutcheck's command line on top. The
// variant is the offset-comparison bug class: the live gate compares a
// position with the chunk's low offset instead of its high one.
const userMain = `// Command mycheck is cutcheck plus one variant of the parallel-chunk capture.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/cutcheck/cutcheck/cli"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
)

func main() {
	p := protocols.Parallel(protocols.ParallelParts{
		Gate: func(plan model.Plan, owner int, pos model.Coord) bool {
			return pos > plan.Units[owner].Lo // should be Hi (Def. 6.4 clause (a))
		},
	})
	p.Name = "parallel-gate-low"
	p.Doc = "parallel chunks whose live gate compares with the low offset"
	if err := errors.Join(
		protocols.Register(p),
		// Flink CDC #592: the snapshot row overrides an in-window update.
		protocols.Register(protocols.Extend(protocols.Classic(protocols.ClassicParts{
			Discard: func(e protocols.MergeEvent) bool { return e.Op != protocols.OpUpdate },
		}), protocols.Extension{Name: "classic-592"})),
		// The live reader started exactly at the minimum high, not anywhere up to it.
		protocols.Register(protocols.Extend(protocols.Parallel(protocols.ParallelParts{
			ReaderStartAt: func(p model.Plan) model.Coord { return protocols.MinHigh(&p) },
		}), protocols.Extension{Name: "parallel-exact-start"})),
		// FLINK-35128: the start offset is not recomputed when a table (chunk 2) is added.
		protocols.Register(protocols.Extend(protocols.Parallel(protocols.ParallelParts{
			ReaderStart: func(p model.Plan) model.Coord { return p.Units[0].Hi },
		}), protocols.Extension{Name: "flink-35128"})),
		// Flink CDC #2885: the gate also passes the event at the high offset.
		protocols.Register(protocols.Extend(protocols.Parallel(protocols.ParallelParts{
			Gate: func(plan model.Plan, o int, pos model.Coord) bool { return pos >= plan.Units[o].Hi },
		}), protocols.Extension{Name: "parallel-2885"})),
		// The live reader started once every high is recorded, and never held.
		protocols.Register(protocols.Extend(protocols.Parallel(protocols.ParallelParts{Concurrent: true, Unheld: true}),
			protocols.Extension{Name: "parallel-unheld"})),
		// A version-max sink under the published parallel capture (§6.5).
		protocols.Register(versionMax(protocols.Parallel(protocols.ParallelParts{}))),
		// Debezium's insert_delete watermarking: the close deletes the open
		// row; a window is still (lo, hi], so the loop is DBLog's.
		protocols.Register(protocols.Extend(protocols.Classic(protocols.ClassicParts{}), protocols.Extension{Name: "debezium-insert-delete"})),
		// Flink CDC taking a split's high offset before its select returns.
		protocols.Register(highBeforeSelect(protocols.Parallel(protocols.ParallelParts{}))),
	); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}

func versionMax(p *protocols.Protocol) *protocols.Protocol {
	p.Name, p.Defaults.Sink = p.Name+"-version-max", model.VersionMax
	return p
}

func highBeforeSelect(p *protocols.Protocol) *protocols.Protocol {
	p.Name, p.Defaults.Fault = "flink-high-before-select", protocols.HighBeforeRead
	return p
}
`

// copierMain is a second user program: a model of the user's own on
// DefineMachine (a row copier without watermarks, as gh-ost and ghostferry
// copy a table) from shipped steps, its state the capture alone, declaring
// the discipline its runs are certified under; the model is at most 40
// lines of code.
const copierMain = `// Command copycheck is cutcheck plus a row copier without watermarks.
package main

import (
	"fmt"
	"os"

	"github.com/cutcheck/cutcheck/cli"
	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
)

// copier: the change stream applied from the start, each chunk copied under
// its rows' locks (read at the log's end, inserted with no commit in
// between) into an insert-ignore sink. Its state is the capture alone.
type copier struct{ cfg protocols.Config }

type action struct {
	Do  string // "commit" Txn, "copy" the next chunk, or "consume"
	Txn protocols.Txn
}

func (a action) String() string { return a.Do }

func (m copier) Init() []model.Capture { return protocols.InitialCaptures(&m.cfg) }

func (m copier) Actions(c *model.Capture, buf []action) []action {
	for t := range protocols.Commits(&m.cfg, &c.Log) {
		buf = append(buf, action{Do: "commit", Txn: t})
	}
	if int(c.Plan.N) < m.cfg.Chunks {
		buf = append(buf, action{Do: "copy"})
	}
	if c.Pos < c.Log.Len() {
		buf = append(buf, action{Do: "consume"})
	}
	return buf
}

func (m copier) Next(c *model.Capture, a action, t *model.Capture) bool {
	switch a.Do {
	case "copy":
		protocols.CopyAt(t, int(t.Plan.N), &m.cfg)
	case "consume":
		protocols.ConsumeNext(t, &m.cfg)
	default:
		return t.Log.Commit(a.Txn.Events()...)
	}
	return true
}

func (m copier) Properties() []explore.Property[model.Capture, action] {
	return invariants.Standard[model.Capture, action](m.cfg.Chunks)
}

// ShardKey: the source commits through Log.Commit only, so shards are exact.
func (m copier) ShardKey(c *model.Capture, d int) (uint64, bool) { return protocols.ShardKey(c, d) }

func main() {
	if err := protocols.Register(protocols.DefineMachine(&protocols.Protocol{
		Name: "row-copier", Doc: "streaming first, each chunk copied under a row lock with insert-ignore",
		Defaults:    protocols.Config{Keys: 2, Values: 2, Events: 3, Chunks: 2, Txn: 2, Sink: model.InsertIgnore},
		Limits:      protocols.Limits{Keys: model.MaxKeys, Values: 8, Events: model.MaxLog, Chunks: model.MaxUnits, Txn: protocols.MaxTxn},
		Disciplines: map[string]string{"": protocols.PointSplice},
	}, func(cfg protocols.Config) explore.Machine[model.Capture, action] { return copier{cfg} })); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
`

// TestUserProgram builds a program in its own module, outside this one
// (a replace directive points at this checkout), and drives it as a user
// would: list, check with --html, a spec file, reproduce over its own spec
// directory.
func TestUserProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a separate module")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		t.Skipf("no go command at %s", goTool)
	}
	variants := strings.Count(userMain, "protocols.Register(")
	if n := codeLines(userMain); n > 30+5*(variants-1) {
		t.Fatalf("the user's program is %d lines of code for %d variants; the first variant should take at most 30, each further one 5", n, variants)
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "go.sum"), string(sum))
	// The user's module requires what this one does, at the same versions
	// and Go version, so its pruned module graph needs no go.mod file this
	// checkout's own build did not already fetch.
	mod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	own, rest, ok := strings.Cut(string(mod), "\n")
	if !ok || own != "module github.com/cutcheck/cutcheck" {
		t.Fatalf("go.mod starts %q", own)
	}
	write(t, filepath.Join(dir, "go.mod"), "module example.com/mycheck\n"+rest+"\nrequire github.com/cutcheck/cutcheck v0.0.0\n\nreplace github.com/cutcheck/cutcheck => "+repo+"\n")
	write(t, filepath.Join(dir, "main.go"), userMain)
	bin := filepath.Join(dir, "mycheck")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	build.Dir = dir
	// Everything the build needs is in this checkout and the module cache
	// its own tests already filled.
	build.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := func(want int, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != want {
			t.Fatalf("mycheck %s: exit %d, want %d\n%s", strings.Join(args, " "), code, want, out)
		}
		return string(out)
	}

	if out := run(exitOK, "list"); !strings.Contains(out, "parallel-gate-low") || !strings.Contains(out, "parallel ") {
		t.Errorf("list does not show the user's protocol beside the shipped ones:\n%s", out)
	}
	if out := run(exitUsage, "frob"); !strings.Contains(out, `mycheck: unknown command "frob" (run 'mycheck help' for the list)`) {
		t.Errorf("the program does not name itself:\n%s", out)
	}
	// check: the variant reads a window event through the gate after the
	// merged block, so a closed chunk's key replays to a value from the
	// wrong time — a transient failure, with its picture.
	html := filepath.Join(dir, "gate-low.html")
	out := run(exitViolated, "check", "parallel-gate-low", "--keys", "2", "--values", "2", "--events", "2", "--chunks", "1", "--txn", "1", "--html", html)
	if !strings.Contains(out, "violated: closed-unit-cut (always, transient") {
		t.Errorf("check: want closed-unit-cut, a transient failure:\n%s", out)
	}
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "parallel-gate-low") {
		t.Errorf("--html: %v; the picture should name the protocol", err)
	}
	// Spec files naming the user's protocol: at rest the sink is right
	// (final-replay holds), mid-run a key's tags go backwards, and an
	// exactly-once sink receives the high offset's event twice.
	specs := filepath.Join(dir, "specs")
	if err := os.Mkdir(specs, 0o755); err != nil {
		t.Fatal(err)
	}
	bounds := `"protocol": "parallel-gate-low", "keys": 2, "values": 2, "events": 3, "chunks": 2, "txn": 1`
	write(t, filepath.Join(specs, "at-rest.json"), `{`+bounds+`, "only": ["final-replay"], "expect": "pass"}`)
	write(t, filepath.Join(specs, "mid-run.json"), `{`+bounds+`, "expect": "per-key-monotonicity"}`)
	write(t, filepath.Join(specs, "exactly-once.json"), `{`+bounds+`, "expect": "no-duplicate-delivery"}`)
	out = run(exitOK, "run", filepath.Join(specs, "at-rest.json"), filepath.Join(specs, "mid-run.json"), filepath.Join(specs, "exactly-once.json"))
	for _, want := range []string{"at-rest", "mid-run", "exactly-once"} {
		if !strings.Contains(out, want) {
			t.Errorf("run: no line for %s:\n%s", want, out)
		}
	}
	// The variants, each through check: the per-key merge rule and
	// FLINK-35128 lose an update at rest; the exact start passes; #2885
	// passes a plain check, which names the delivery check it skipped, and
	// --all shows it; the unheld reader's one-run report shows the final
	// failure next to its first, transient one.
	small := []string{"--keys", "2", "--values", "1", "--events", "2", "--chunks", "2", "--txn", "1", "--progress", "0"}
	if out := run(exitViolated, append(append([]string{"check", "classic-592"}, small...), "--values", "2", "--chunks", "1")...); !strings.Contains(out, "violated: final-replay") || !strings.Contains(out, "the variant's merge rule") {
		t.Errorf("classic-592: want final-replay, in the variant's words:\n%s", out)
	}
	run(exitOK, append([]string{"check", "parallel-exact-start"}, small...)...)
	if out := run(exitViolated, append([]string{"check", "flink-35128", "--only", "final-replay"}, small...)...); !strings.Contains(out, "Counterexample (10 steps)") || !strings.Contains(out, "the variant's ReaderStart") {
		t.Errorf("flink-35128: want a lost update in 10 steps, in the variant's words:\n%s", out)
	}
	if out := run(exitOK, append([]string{"check", "parallel-2885"}, small...)...); !strings.Contains(out, "unchecked:   no-duplicate-delivery") {
		t.Errorf("parallel-2885: a plain check should name what it did not check:\n%s", out)
	}
	if out := run(exitViolated, append([]string{"check", "parallel-2885", "--all"}, small...)...); !strings.Contains(out, "no-duplicate-delivery   delivery   VIOLATED") {
		t.Errorf("parallel-2885 --all:\n%s", out)
	}
	out = run(exitViolated, append([]string{"check", "parallel-unheld", "--all"}, small...)...)
	if !strings.Contains(out, "final-replay            final      VIOLATED in 12 steps") || !strings.Contains(out, "closed-unit-cut         transient  VIOLATED in 11 steps") {
		t.Errorf("parallel-unheld --all: want the final failure beside the transient one:\n%s", out)
	}
	// The version-max sink: under reader-before-backfill the sink is right
	// at rest while the stream goes backwards; the counterexample's bundle
	// is certified under the variant's discipline (range-merge, kept from
	// Parallel) and rejected; two shards of the search at rest merge to the
	// single run's count.
	vm := []string{"check", "parallel-version-max", "--mutation", "reader-before-backfill", "--keys", "2", "--events", "3", "--chunks", "1", "--progress", "0"}
	bundle := filepath.Join(dir, "vm.jsonl")
	if out := run(exitViolated, append(vm, "--bundle", bundle)...); !strings.Contains(out, "violated: per-key-monotonicity") || !strings.Contains(out, "sink=version-max") {
		t.Errorf("parallel-version-max: want the stream's monotonicity to fail under the version-max sink:\n%s", out)
	}
	if out := run(exitViolated, "certify", bundle); !strings.Contains(out, "Reject") {
		t.Errorf("certify of the variant's counterexample:\n%s", out)
	}
	atRest := append(vm, "--only", "final-replay")
	single := run(exitOK, atRest...)
	shards := filepath.Join(dir, "shards")
	for i := range 2 {
		run(exitOK, append(atRest, "--shard", strconv.Itoa(i)+"/2", "--shard-dir", shards)...)
	}
	entries, _ := os.ReadDir(shards)
	if len(entries) != 1 {
		t.Fatalf("the shards wrote %d searches' directories, want 1", len(entries))
	}
	merged := run(exitOK, "merge", filepath.Join(shards, entries[0].Name()))
	distinct := regexp.MustCompile(`distinct: +\d+`)
	if a, b := distinct.FindString(single), distinct.FindString(merged); a == "" || a != b {
		t.Errorf("the merged shards count %q, the single run %q", b, a)
	}
	// The two watermark designs and the version-max sink, each through
	// check --all, check with its picture, a counterexample's bundle
	// certified, and two shards merged: Debezium's insert_delete holds at
	// rest and is caught by a shipped mutation of the loop; Flink's
	// high-before-select is a fault chosen by the design, which list and
	// the report name and --mutation may not replace.
	for _, d := range []struct {
		name, mutation, want string
	}{
		{"debezium-insert-delete", "early-release", "Reject"},
		{"flink-high-before-select", "", "Reject"},
		{"parallel-version-max", "reader-before-backfill", "Reject"},
	} {
		args := append([]string{"check", d.name}, small...)
		if d.mutation != "" {
			run(exitOK, args...)
			args = append(args, "--mutation", d.mutation)
		}
		if out := run(exitViolated, append(args, "--all")...); !regexp.MustCompile(`\n  [a-z-]+ +[a-z]+ +VIOLATED`).MatchString(out) {
			t.Errorf("%s --all: want the table of every property:\n%s", d.name, out)
		}
		html, bundle := filepath.Join(dir, d.name+".html"), filepath.Join(dir, d.name+".jsonl")
		out := run(exitViolated, append(args, "--html", html, "--bundle", bundle)...)
		if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), d.name) || !strings.Contains(out, "violated") {
			t.Errorf("%s: %v\n%s", d.name, err, out)
		}
		if out := run(exitViolated, "certify", bundle); !strings.Contains(out, d.want) {
			t.Errorf("%s: certify of its counterexample:\n%s", d.name, out)
		}
		one := run(exitOK, append(args, "--only", "final-replay", "--events", "1")...)
		shards := filepath.Join(dir, d.name+"-shards")
		for i := range 2 {
			run(exitOK, append(args, "--only", "final-replay", "--events", "1", "--shard", strconv.Itoa(i)+"/2", "--shard-dir", shards)...)
		}
		entries, _ := os.ReadDir(shards)
		if len(entries) != 1 {
			t.Fatalf("%s: the shards wrote %d searches' directories, want 1", d.name, len(entries))
		}
		if a, b := distinct.FindString(one), distinct.FindString(run(exitOK, "merge", filepath.Join(shards, entries[0].Name()))); a == "" || a != b {
			t.Errorf("%s: the merged shards count %q, the single run %q", d.name, b, a)
		}
	}
	if out := run(exitOK, "list"); !regexp.MustCompile(`flink-high-before-select[^\n]*\n[^\n]*high-before-read`).MatchString(out) {
		t.Errorf("list does not show the design's fault:\n%s", out)
	}
	if out := run(exitUsage, append([]string{"check", "flink-high-before-select", "--mutation", "early-release"}, small...)...); !strings.Contains(out, "high-before-read") {
		t.Errorf("--mutation over the design's own fault:\n%s", out)
	}
	// The row copier, a model of the user's own: nothing lost at rest
	// (--all shows the transient failures of a copy newer than the events
	// still to apply), a picture, a counterexample's bundle rejected by
	// certify, two shards at rest merged to the single run's count.
	model := copierMain[strings.Index(copierMain, "type copier struct"):strings.Index(copierMain, "func main()")]
	if n := codeLines(model); n > 40 {
		t.Errorf("the row copier's model is %d lines of code, want at most 40", n)
	}
	if err := os.Mkdir(filepath.Join(dir, "copier"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "copier", "main.go"), copierMain)
	cbuild := exec.Command(goTool, "build", "-o", filepath.Join(dir, "copycheck"), "./copier")
	cbuild.Dir, cbuild.Env = dir, build.Env
	if out, err := cbuild.CombinedOutput(); err != nil {
		t.Fatalf("go build ./copier: %v\n%s", err, out)
	}
	bin = filepath.Join(dir, "copycheck")
	out = run(exitViolated, "check", "row-copier", "--all", "--progress", "0")
	if !strings.Contains(out, "violated (transient only: nothing lost at rest)") || !regexp.MustCompile(`final-replay +final +holds`).MatchString(out) ||
		!regexp.MustCompile(`per-key-monotonicity +transient +VIOLATED`).MatchString(out) {
		t.Errorf("row-copier --all:\n%s", out)
	}
	cbundle, chtml := filepath.Join(dir, "copier.jsonl"), filepath.Join(dir, "copier.html")
	out = run(exitViolated, "check", "row-copier", "--progress", "0", "--html", chtml, "--bundle", cbundle)
	if b, err := os.ReadFile(chtml); err != nil || !strings.Contains(string(b), "row-copier") || !strings.Contains(out, "step 2: copy\n  unit 1: {k0} bracket (2, 2]") || strings.Contains(out, "Log: {") {
		t.Errorf("row-copier: %v; the trace should show each step's action and what it changed:\n%s", err, out)
	}
	if out := run(exitViolated, "certify", cbundle); !strings.Contains(out, "Reject") {
		t.Errorf("certify of the copier's counterexample:\n%s", out)
	}
	crest := []string{"check", "row-copier", "--only", "final-replay", "--progress", "0"}
	single = run(exitOK, crest...)
	cshards := filepath.Join(dir, "copier-shards")
	for i := range 2 {
		run(exitOK, append(crest, "--shard", strconv.Itoa(i)+"/2", "--shard-dir", cshards)...)
	}
	entries, _ = os.ReadDir(cshards)
	if len(entries) != 1 {
		t.Fatalf("the copier's shards wrote %d searches' directories, want 1", len(entries))
	}
	if a, b := distinct.FindString(single), distinct.FindString(run(exitOK, "merge", filepath.Join(cshards, entries[0].Name()))); a == "" || a != b {
		t.Errorf("the copier's merged shards count %q, the single run %q", b, a)
	}
	bin = filepath.Join(dir, "mycheck")
	results := filepath.Join(dir, "results")
	run(exitOK, "reproduce", "--specs", specs, "--out", results)
	if b, err := os.ReadFile(filepath.Join(results, "table.md")); err != nil || !strings.Contains(string(b), "mid-run") {
		t.Errorf("reproduce over the user's specs wrote no table with their runs: %v", err)
	}
}

// codeLines counts the lines of src that are neither blank nor comments.
func codeLines(src string) int {
	n := 0
	sc := bufio.NewScanner(strings.NewReader(src))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "//") {
			n++
		}
	}
	return n
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
