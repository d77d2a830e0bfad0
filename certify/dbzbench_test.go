package certify

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

// dbzSynth writes a PostgreSQL incremental snapshot of keys 1..keys in
// chunks of chunk keys, with events row changes to random keys spread over
// the windows and between them, as Debezium delivers it: each window's
// surviving rows after its close, at the close's position. A read row is
// the key's value at the close; a key an in-window event touched is
// discarded (Def. 6.2).
func dbzSynth(w io.Writer, keys, chunk, events int) (bounds []json.RawMessage) {
	r := pgRec()
	r.w = w
	rng := rand.New(rand.NewPCG(1, 2))
	val := make([]int, keys+1) // 0: absent
	for k := 1; k <= keys; k++ {
		val[k] = 1
	}
	row := func(k int) map[string]any { return cust(k, "v"+strconv.Itoa(val[k])) }
	change := func() {
		k := 1 + rng.IntN(keys)
		switch {
		case val[k] == 0:
			val[k] = 1
			r.create(row(k))
		case rng.IntN(10) == 0:
			r.delete(row(k))
			val[k] = 0
		default:
			before := row(k)
			val[k]++
			r.update(before, row(k))
		}
	}
	chunks := (keys + chunk - 1) / chunk
	inWindow := max(chunk/20, 1)              // events in a window
	between := max(events/chunks-inWindow, 0) // and after it
	r.execute()
	done := 0
	for c := range chunks {
		lo, hi := c*chunk+1, min((c+1)*chunk, keys)
		id := "c" + strconv.Itoa(c)
		r.open(id)
		touched := map[int]bool{}
		for range inWindow {
			k := lo + rng.IntN(hi-lo+1)
			touched[k] = true
			before := val[k]
			if before == 0 {
				val[k] = 1
				r.create(row(k))
			} else {
				b := row(k)
				val[k]++
				r.update(b, row(k))
			}
			done++
		}
		r.close(id)
		for k := lo; k <= hi; k++ {
			if !touched[k] && val[k] != 0 {
				r.read(row(k))
			}
		}
		bounds = append(bounds, json.RawMessage(strconv.Itoa(hi)))
		for range between {
			change()
			done++
		}
	}
	r.open("last")
	r.close("last")
	for ; done < events; done++ {
		change()
	}
	return append(bounds, json.RawMessage("null"))
}

// dbzSynthFile writes dbzSynth's recording, in chunks of 1,000 keys, to
// path and returns its chunk bounds.
func dbzSynthFile(tb testing.TB, path string, keys, events int) []json.RawMessage {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	bounds := dbzSynth(bw, keys, 1000, events)
	if err := bw.Flush(); err != nil {
		tb.Fatal(err)
	}
	return bounds
}

// BenchmarkFromDebezium converts a 1 M-event recording (200 k keys in
// chunks of 1,000; about 1.2 M records) and verifies the bundle, reporting
// the converter's rate and its peak heap. Run with
//
//	go test ./certify -run '^$' -bench FromDebezium -benchtime 1x
//
// CUTCHECK_BENCH_SCALE=N multiplies keys and events by N;
// CUTCHECK_BENCH_MEM (e.g. 256MiB) is the converter's budget (default
// MinMem). The peak resident memory includes the recording's generation:
// run it with -benchtime 1x and read it as an upper bound.
func BenchmarkFromDebezium(b *testing.B) {
	keys, events := 200_000, 1_000_000
	if n, err := strconv.Atoi(os.Getenv("CUTCHECK_BENCH_SCALE")); err == nil && n > 1 {
		keys, events = keys*n, events*n
	}
	path := filepath.Join(b.TempDir(), "topic.jsonl")
	bounds := dbzSynthFile(b, path, keys, events)
	fi, _ := os.Stat(path)
	for range b.N {
		in, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var peak atomic.Uint64
		done := make(chan struct{})
		go func() {
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				peak.Store(max(peak.Load(), ms.HeapInuse))
				select {
				case <-done:
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		}()
		out, err := os.Create(filepath.Join(b.TempDir(), "bundle.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		mem, _ := parseMem(os.Getenv("CUTCHECK_BENCH_MEM"))
		conv, fail, err := FromDebeziumFiles([]DebeziumInput{{Name: path, R: in}}, out, DebeziumOptions{Table: "customers", MaxKey: []byte(strconv.Itoa(keys)), ChunkBounds: bounds, Mem: mem, Dir: b.TempDir()})
		elapsed := time.Since(start)
		rss := procStatus("VmHWM")
		close(done)
		in.Close()
		if err != nil || fail != nil {
			b.Fatal(err, fail)
		}
		out.Seek(0, io.SeekStart)
		res, err := Verify(out, Options{})
		out.Close()
		if err != nil || res.Verdict != Accept || res.Cut.Scope != "[−∞, +∞)" {
			b.Fatalf("%v %s %q", err, res.Line(), conv.Notes)
		}
		b.ReportMetric(float64(res.Stats.Events)/elapsed.Seconds(), "events/s")
		b.ReportMetric(float64(peak.Load())/(1<<20), "MiB-heap-peak")
		b.ReportMetric(float64(rss)/(1<<20), "MiB-peak-RSS")
		b.ReportMetric(float64(fi.Size())/(1<<20), "MiB-recording")
		b.ReportMetric(elapsed.Seconds(), "s/convert")
	}
}

// The generator is checked: a small recording converts and is accepted on
// the whole table.
func TestDbzSynthAccepted(t *testing.T) {
	var sb strings.Builder
	bounds := dbzSynth(&sb, 3000, 100, 20000)
	b, notes := convertOpt(t, sb.String(), DebeziumOptions{MaxKey: []byte("3000"), ChunkBounds: bounds})
	res := mustAccept(t, b)
	if res.Cut.Scope != "[−∞, +∞)" || res.Stats.Events < 20000 || res.Stats.Reads < 2500 {
		t.Fatalf("%s %q %+v", res.Line(), notes, res.Stats)
	}
	// and it can fail: the last chunk row, of a key the log wrote before
	// (a key no event wrote is its read: the base is from the reads), with
	// a value the key never held
	lines := strings.SplitAfter(sb.String(), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], `"op":"r"`) {
			lines[i] = strings.Replace(lines[i], `"name":"v`, `"name":"stale-v`, 1)
			break
		}
	}
	b, _ = convertOpt(t, strings.Join(lines, ""), DebeziumOptions{MaxKey: []byte("3000"), ChunkBounds: bounds})
	if res := verifyBytes(t, b, Options{}); res.Verdict != Reject || res.Failure.Obligation != "S4" {
		t.Fatalf("a stale chunk row: %s", res.Line())
	}
}

// parseMem reads a budget such as 256MiB or 1GiB.
func parseMem(s string) (int64, error) {
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n * u.n, err
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

// The records are prepared in batches on several goroutines and applied in
// order: a failure is the first in the dump's order whichever batch finds
// it, one that depends on the records before (a second connector) comes
// before a malformed line after it, and a reading error comes after the
// lines before it.
func TestDebeziumBatches(t *testing.T) {
	var sb strings.Builder
	bounds := dbzSynth(&sb, 3000, 100, 20000)
	lines := strings.SplitAfter(sb.String(), "\n")
	opt := DebeziumOptions{Table: "customers", MaxKey: []byte("3000"), ChunkBounds: bounds}
	with := func(edits map[int]string) string {
		out := slices.Clone(lines)
		for n, l := range edits {
			out[n-1] = l + "\n"
		}
		return strings.Join(out, "")
	}
	mysql := strings.Replace(lines[14999], `"connector":"postgresql"`, `"connector":"mysql"`, 1)
	for _, c := range []struct {
		edits       map[int]string
		line        int64
		field, want string
	}{
		{map[int]string{20000: "garbage"}, 20000, "format", "neither a JSON value"},
		{map[int]string{15000: mysql, 15001: "garbage"}, 15000, "source.connector", `connector "mysql" after "postgresql"`},
		{map[int]string{3: "{}", 15001: "garbage"}, 3, "source", "no op, before, after or source"},
	} {
		for _, per := range []int{1, 7, 1024} {
			batchLines = per
			_, _, f, err := convertBoth(t, []string{with(c.edits)}, opt)
			batchLines = 1024
			if err != nil || f == nil || f.Line != c.line || f.Field != c.field || !strings.Contains(f.Detail, c.want) {
				t.Fatalf("%d lines a batch, %v: got %v %v, want line %d, %s", per, c.edits, f, err, c.line, c.want)
			}
		}
	}
	// a reading error after 10,000 lines: reported, unless a line before it fails
	broken := func(in string) io.Reader {
		at := len(strings.Join(lines[:10000], ""))
		return io.MultiReader(strings.NewReader(in[:at]), iotest.ErrReader(errors.New("disk gone")))
	}
	_, f, err := FromDebeziumFiles([]DebeziumInput{{Name: "r", R: broken(sb.String())}}, io.Discard, opt)
	if f != nil || err == nil || err.Error() != "disk gone" {
		t.Fatalf("a reading error: %v %v", f, err)
	}
	_, f, err = FromDebeziumFiles([]DebeziumInput{{Name: "r", R: broken(with(map[int]string{9999: "garbage"}))}}, io.Discard, opt)
	if err != nil || f == nil || f.Line != 9999 {
		t.Fatalf("a failure before a reading error: %v %v", f, err)
	}
	// and without either, the whole table is accepted
	b, _ := convertOpt(t, sb.String(), opt)
	if res := mustAccept(t, b); res.Cut.Scope != "[−∞, +∞)" {
		t.Fatalf("%s", res.Line())
	}
}

// A failure is reported once its line has come, not once a batch is full:
// a pipe that stops after it (a consumer still running) does not hold it.
func TestDebeziumBatchesFromAPipe(t *testing.T) {
	var sb strings.Builder
	dbzSynth(&sb, 300, 100, 500)
	lines := strings.SplitAfter(sb.String(), "\n")
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() {
		io.WriteString(pw, strings.Join(lines[:200], "")+"garbage\n"+strings.Join(lines[200:210], "")+`{"partial":`)
	}()
	done := make(chan *Failure)
	go func() {
		_, f, _ := FromDebeziumFiles([]DebeziumInput{{Name: "pipe", R: pr}}, io.Discard, DebeziumOptions{Table: "customers"})
		done <- f
	}()
	select {
	case f := <-done:
		if f == nil || f.Line != 201 || f.Field != "format" {
			t.Fatalf("got %v, want the line 201's failure", f)
		}
	case <-time.After(time.Minute):
		t.Fatal("the failure on line 201 waited for the pipe to go on")
	}
}
