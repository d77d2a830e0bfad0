package certify

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
)

// same verifies b in memory and with a budget of one byte (every state and
// every backlog entry goes to disk after each record) and fails unless the
// answers are one: verdict, failure, cut and its state. It returns the
// spilling run's result.
func same(t *testing.T, what string, b []byte, opt Options) *Result {
	t.Helper()
	opt.KeepState = true
	mem := verifyBytes(t, b, opt)
	opt.Mem, opt.Dir = 1, t.TempDir()
	sp := verifyBytes(t, b, opt)
	n := sp.Stats.Spills
	sp.Stats.Spills = 0
	a, _ := json.Marshal(mem)
	c, _ := json.Marshal(sp)
	if !bytes.Equal(a, c) {
		t.Fatalf("%s: in memory and spilled differ\n%s\n%s\n%s", what, a, c, b)
	}
	if left, _ := filepath.Glob(filepath.Join(opt.Dir, "*")); len(left) != 0 {
		t.Fatalf("%s: the spill directory is left behind: %v", what, left)
	}
	sp.Stats.Spills = n
	return sp
}

// verifyPipe verifies b read as from a pipe, which cannot be read again:
// past the budget its states spill (a file would be verified in parts).
func verifyPipe(t testing.TB, b []byte, opt Options) *Result {
	t.Helper()
	res, err := Verify(struct{ io.Reader }{bytes.NewReader(b)}, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// lagging moves every emitted entry after the whole log: the stream lags
// the log by all of it, so the backlog is every entry.
func lagging(b []byte) []byte {
	var head, outs []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if strings.HasPrefix(l, `{"out"`) {
			outs = append(outs, l)
		} else {
			head = append(head, l)
		}
	}
	return []byte(strings.Join(head, "") + strings.Join(outs, ""))
}

// Verdicts do not depend on spilling: a sample of the cross-check
// enumeration in every form (key lists and ranges, integer and string keys,
// from-reads bases, survivor-only reads, executed-set coordinates, a
// restricted scope), mutated at random, and with the stream lagging the
// whole log; each verified in memory and with everything spilled.
func TestSpillSameVerdicts(t *testing.T) {
	every := 10007
	if raceEnabled || testing.Short() {
		every = 40009
	}
	r := rand.New(rand.NewPCG(3, 4))
	cases, accepted, spilled := 0, 0, int64(0)
	check := func(what string, b []byte, opt Options) {
		res := same(t, what, b, opt)
		cases++
		spilled += res.Stats.Spills
		if res.Verdict == Accept {
			accepted++
		}
	}
	sampled(t, 2, 1, every, func(c *xcase, ranges bool, b []byte) {
		check("model", b, Options{})
		check("lagging", lagging(b), Options{})
		check("string keys", stringKeys(b), Options{})
		check("from reads", fromReads(lagging(b)), Options{})
		check("restricted", b, Options{Restrict: keysScope("1")})
		if ranges && c.discipline == WindowDiscard {
			check("survivors", survivorsOnly(b, c), Options{})
		}
		check("mutated", mutate(b, r), Options{})
		check("mutated, lagging", lagging(mutate(b, r)), Options{})
	})
	for _, d := range []string{WindowDiscard, RangeMerge} { // runs with present keys
		ex := runExample(t, d)
		for _, ranges := range []bool{false, true} {
			ex.Ranges = ranges
			b := bundleOf(t, ex)
			check("example", b, Options{})
			check("example, lagging", lagging(b), Options{})
			check("example, string keys", stringKeys(b), Options{})
			check("example, from reads", fromReads(b), Options{})
		}
	}
	check("executed-set", executedRun(t), Options{})
	check("executed-set, lagging", lagging(executedRun(t)), Options{})
	if accepted == 0 || accepted == cases || spilled == 0 {
		t.Fatalf("%d cases, %d accepted, %d spills: the comparison is vacuous", cases, accepted, spilled)
	}
	t.Logf("%d bundles, %d accepted, %d spills", cases, accepted, spilled)
}

// A generated run large enough for several batches and chunks, its stream
// lagging the log by all of it, is accepted with its states and backlog
// spilled under a small budget, and the cut is the in-memory one; an entry
// altered deep in the spilled backlog is rejected alike.
func TestSpillLaggingStream(t *testing.T) {
	s := synth{keys: 3000, chunkKeys: 500, window: 1000, events: 12000}
	var b bytes.Buffer
	if err := s.write(&b); err != nil {
		t.Fatal(err)
	}
	lag := lagging(b.Bytes())
	for _, mem := range []int64{64 << 10} {
		res := verifyPipe(t, lag, Options{Mem: mem, Dir: t.TempDir()})
		ref := verifyBytes(t, lag, Options{})
		if res.Verdict != Accept || res.Cut.Digest != ref.Cut.Digest || res.Stats.Spills == 0 {
			t.Fatalf("mem %d: %s (%d spills); in memory %s", mem, res.Line(), res.Stats.Spills, ref.Line())
		}
	}
	// Alter the value of an entry far into the backlog.
	lines := strings.Split(string(lag), "\n")
	i := len(lines) - 5000
	for !strings.HasPrefix(lines[i], `{"out"`) || !strings.Contains(lines[i], `"v":`) || strings.Contains(lines[i], `"v":null`) {
		i++
	}
	lines[i] = strings.Replace(lines[i], `"v":`, `"v":9`, 1)
	bad := []byte(strings.Join(lines, "\n"))
	res := verifyPipe(t, bad, Options{Mem: 64 << 10, Dir: t.TempDir()})
	ref := verifyBytes(t, bad, Options{})
	if res.Verdict != Reject || res.Line() != ref.Line() {
		t.Fatalf("altered entry: %s; in memory %s", res.Line(), ref.Line())
	}
}

// The spill directory carries an owner file under lock, so `cutcheck clean`
// (explore.RemoveOrphans) can tell a killed run's directory from a live one.
func TestSpillDirOwned(t *testing.T) {
	parent := t.TempDir()
	sp, err := openSpill(parent, 0)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(sp.dir, "owner"))
	if err != nil || strings.TrimSpace(string(data)) == "" || !strings.HasPrefix(filepath.Base(sp.dir), "cutcheck-") {
		t.Fatalf("%s: owner %q, %v", sp.dir, data, err)
	}
	if got, err := explore.RemoveOrphans(parent); err != nil || len(got) != 0 {
		t.Fatalf("while its run is alive: removed %v, %v", got, err)
	}
	sp.close()
	if left, _ := os.ReadDir(parent); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
	// A run that dies leaves its directory with the lock released.
	if sp, err = openSpill(parent, 0); err != nil {
		t.Fatal(err)
	}
	sp.db.Close()
	sp.owner.Close()
	if got, err := explore.RemoveOrphans(parent); err != nil || len(got) != 1 || got[0].Path != sp.dir {
		t.Fatalf("after its run: removed %v, %v", got, err)
	}
}

// A spill directory that cannot be made is an I/O error, not a verdict.
func TestSpillDirMissing(t *testing.T) {
	b := bundleOf(t, runExample(t, WindowDiscard))
	_, err := Verify(bytes.NewReader(b), Options{Mem: 1, Dir: filepath.Join(t.TempDir(), "missing")})
	if err == nil || !strings.Contains(err.Error(), "spill") {
		t.Fatalf("err %v", err)
	}
}
