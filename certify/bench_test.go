package certify

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// synth describes a generated window-discard run: keys 0..keys-1 in
// chunks of chunkKeys, chunk i bracketed by (i·window, (i+1)·window], a log
// of events random row events over all keys (one in twenty a delete), every
// event emitted at its place, each chunk's survivors at its close, the
// frontier at the end of the log. The base is unknown (from-reads): a key's
// initial value is what its chunk read at the low edge.
type synth struct {
	keys, chunkKeys, window, events int
}

type rng uint64

func (r *rng) next() uint64 {
	x := uint64(*r)
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	*r = rng(x)
	return x
}

// event returns the key and value (0 = delete) of the next log event.
func (s synth) event(r *rng) (int, int) {
	x := r.next()
	k := int(x % uint64(s.keys))
	if (x>>32)%20 == 0 {
		return k, 0
	}
	return k, int((x>>40)%1000) + 1
}

func (s synth) chunks() int { return (s.keys + s.chunkKeys - 1) / s.chunkKeys }

// write generates the bundle. The reads are σ at each chunk's low edge, so
// the log's first chunks·window events are generated twice.
func (s synth) write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	n := s.chunks()
	base := func(k int) int { return k%7 + 1 }
	cur := make([]int32, s.keys)
	for k := range cur {
		cur[k] = int32(base(k))
	}
	read := make([]int32, s.keys)
	r := rng(88172645463325252)
	snap := func(i int) {
		for k := i * s.chunkKeys; k < min((i+1)*s.chunkKeys, s.keys); k++ {
			read[k] = cur[k]
		}
	}
	snap(0)
	for p := 1; p <= n*s.window && p <= s.events; p++ {
		k, v := s.event(&r)
		cur[k] = int32(v)
		if p%s.window == 0 && p/s.window < n {
			snap(p / s.window)
		}
	}
	bw.WriteString(`{"format":"cutcheck-evidence","version":1,"coordinates":"position","keys":"integer","base":"from-reads","discipline":"window-discard",` +
		`"certificate":{"scope":{"ranges":[{"ge":0,"lt":` + strconv.Itoa(s.keys) + `}]},"frontier":` + strconv.Itoa(s.events) + `},` +
		`"run":{"scope":{"ranges":[{"ge":0,"lt":` + strconv.Itoa(s.keys) + `}]},"start":0,"consumed":` + strconv.Itoa(s.events) + `},"units":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString(`{"domain":{"ranges":[{"ge":` + strconv.Itoa(i*s.chunkKeys) + `,"lt":` + strconv.Itoa(min((i+1)*s.chunkKeys, s.keys)) +
			`}]},"lo":` + strconv.Itoa(i*s.window) + `,"hi":` + strconv.Itoa((i+1)*s.window) + `}`)
	}
	bw.WriteString("]}\n")
	var num []byte
	val := func(v int32) []byte {
		if v == 0 {
			return []byte("null")
		}
		num = strconv.AppendInt(num[:0], int64(v), 10)
		return num
	}
	line := make([]byte, 0, 64)
	for k := 0; k < s.keys; k++ {
		line = append(line[:0], `{"read":`...)
		line = strconv.AppendInt(line, int64(k/s.chunkKeys+1), 10)
		line = append(line, `,"k":`...)
		line = strconv.AppendInt(line, int64(k), 10)
		line = append(line, `,"v":`...)
		line = append(line, val(read[k])...)
		line = append(line, "}\n"...)
		bw.Write(line)
	}
	last := make([]int32, s.keys) // position of each key's last event
	r = rng(88172645463325252)
	closeChunk := func(i int) {
		lo, hi := i*s.window, (i+1)*s.window
		for k := i * s.chunkKeys; k < min((i+1)*s.chunkKeys, s.keys); k++ {
			if read[k] == 0 || int(last[k]) > lo && int(last[k]) <= hi {
				continue
			}
			line = append(line[:0], `{"out":`...)
			line = strconv.AppendInt(line, int64(k), 10)
			line = append(line, `,"v":`...)
			line = append(line, val(read[k])...)
			line = append(line, `,"tag":`...)
			line = strconv.AppendInt(line, int64(hi), 10)
			line = append(line, "}\n"...)
			bw.Write(line)
		}
	}
	for p := 1; p <= s.events; p++ {
		if (p-1)%s.window == 0 && (p-1)/s.window >= 1 && (p-1)/s.window <= n {
			closeChunk((p-1)/s.window - 1)
		}
		k, v := s.event(&r)
		last[k] = int32(p)
		line = append(line[:0], `{"p":`...)
		line = strconv.AppendInt(line, int64(p), 10)
		line = append(line, `,"k":`...)
		line = strconv.AppendInt(line, int64(k), 10)
		line = append(line, `,"v":`...)
		line = append(line, val(int32(v))...)
		line = append(line, "}\n"...)
		bw.Write(line)
		line = append(line[:0], `{"out":`...)
		line = strconv.AppendInt(line, int64(k), 10)
		line = append(line, `,"v":`...)
		line = append(line, val(int32(v))...)
		line = append(line, `,"tag":`...)
		line = strconv.AppendInt(line, int64(p), 10)
		line = append(line, "}\n"...)
		bw.Write(line)
	}
	if s.events/s.window <= n && s.events%s.window == 0 && s.events/s.window >= 1 {
		closeChunk(s.events/s.window - 1)
	}
	return bw.Flush()
}

// verifySynth streams a generated bundle through Verify over a pipe.
func verifySynth(tb testing.TB, s synth, opt Options) (*Result, time.Duration, uint64) {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(s.write(pw)) }()
	return verifyTimed(tb, pr, opt)
}

// verifyTimed runs Verify on r, timing it and sampling the heap's peak.
func verifyTimed(tb testing.TB, r io.Reader, opt Options) (*Result, time.Duration, uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() { // sample the heap: memory must follow keys, not events
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	res, err := Verify(r, opt)
	elapsed := time.Since(start)
	close(done)
	if err != nil {
		tb.Fatal(err)
	}
	return res, elapsed, peak.Load()
}

// The generator is itself checked: a small run is accepted, and its
// survivors really are emitted (a wrong generator would be rejected).
func TestSynthAccepted(t *testing.T) {
	s := synth{keys: 2000, chunkKeys: 250, window: 500, events: 20000}
	res, _, _ := verifySynth(t, s, Options{})
	if res.Verdict != Accept || res.Stats.Events != 20000 || res.Stats.Units != 8 {
		t.Fatalf("%s %+v", res.Line(), res.Stats)
	}
}

// BenchmarkVerify10M: 10 M log events over 1 M keys in 100 chunks (about
// 21 M bundle lines, 0.5 GB), generated into a file under
// CUTCHECK_BENCH_DIR (the test's temporary directory if unset) before the
// clock starts, and read from it as the CLI reads a bundle file.
// CUTCHECK_BENCH_PIPE=1 streams it from the generator, running on the same
// cores, through a pipe instead. Run with
//
//	go test ./certify -run '^$' -bench Verify10M -benchtime 1x
func BenchmarkVerify10M(b *testing.B) {
	s := synth{keys: 1_000_000, chunkKeys: 10_000, window: 10_000, events: 10_000_000}
	pipe := os.Getenv("CUTCHECK_BENCH_PIPE") == "1"
	var name string
	if !pipe {
		dir := os.Getenv("CUTCHECK_BENCH_DIR")
		if dir == "" {
			dir = b.TempDir()
		}
		f, err := os.CreateTemp(dir, "synth-*.jsonl")
		if err != nil {
			b.Fatal(err)
		}
		name = f.Name()
		defer os.Remove(name)
		err = s.write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		var res *Result
		var elapsed time.Duration
		var peak uint64
		if pipe {
			res, elapsed, peak = verifySynth(b, s, Options{})
		} else {
			f, err := os.Open(name)
			if err != nil {
				b.Fatal(err)
			}
			res, elapsed, peak = verifyTimed(b, f, Options{})
			f.Close()
		}
		if res.Verdict != Accept {
			b.Fatal(res.Line())
		}
		b.ReportMetric(float64(res.Stats.Events)/elapsed.Seconds(), "events/s")
		b.ReportMetric(float64(res.Stats.Lines)/elapsed.Seconds(), "lines/s")
		b.ReportMetric(float64(peak)/(1<<20), "MB-heap-peak")
		b.ReportMetric(elapsed.Seconds(), "s/verify")
	}
}

// TestHelperSynth is not a test: run by BenchmarkVerify100M in a child
// process, it writes the synth bundle $CUTCHECK_SYNTH (keys,chunkKeys,
// window,events) to standard output, so that the generator's own tables are
// not counted in the verifier's resident memory.
func TestHelperSynth(t *testing.T) {
	spec := os.Getenv("CUTCHECK_SYNTH")
	if spec == "" {
		t.Skip("helper for BenchmarkVerify100M")
	}
	var s synth
	if _, err := fmt.Sscanf(spec, "%d,%d,%d,%d", &s.keys, &s.chunkKeys, &s.window, &s.events); err != nil {
		t.Fatal(err)
	}
	if err := s.write(os.Stdout); err != nil {
		t.Fatal(err)
	}
	os.Exit(0) // no PASS line in the bundle
}

// procStatus reads a field of /proc/self/status in bytes (0 if absent).
func procStatus(name string) int64 {
	data, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == name+":" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n << 10
		}
	}
	return 0
}

// BenchmarkVerify100M: 100 M log events over 50 M keys in 5,000 chunks
// (about 250 M bundle lines, 9 GB), verified under a 1 GiB budget. The
// bundle is generated by a child process into a file under
// CUTCHECK_BENCH_DIR (the test's temporary directory if unset), which the
// verifier reads as the CLI reads a bundle file: past the budget it is
// verified as a local split (partition.go). CUTCHECK_BENCH_PIPE=1 reads it
// through a pipe instead, where the states spill to the store. The peak
// resident memory is the verifier's (VmHWM), with the peak of its
// file-backed part (the store's mapped tables) beside it. It takes long;
// run it alone:
//
//	go test ./certify -run '^$' -bench Verify100M -benchtime 1x -timeout 0
//
// CUTCHECK_BENCH_SCALE=10 divides keys and events by 10 (and the budget).
func BenchmarkVerify100M(b *testing.B) {
	s := synth{keys: 50_000_000, chunkKeys: 10_000, window: 10_000, events: 100_000_000}
	mem := int64(1 << 30)
	if d, err := strconv.Atoi(os.Getenv("CUTCHECK_BENCH_SCALE")); err == nil && d > 1 {
		s.keys, s.events, mem = s.keys/d, s.events/d, mem/int64(d)
	}
	pipe := os.Getenv("CUTCHECK_BENCH_PIPE") == "1"
	dir := os.Getenv("CUTCHECK_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	for range b.N {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSynth$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("CUTCHECK_SYNTH=%d,%d,%d,%d", s.keys, s.chunkKeys, s.window, s.events))
		cmd.Stderr = os.Stderr
		var in io.Reader
		if pipe {
			out, err := cmd.StdoutPipe()
			if err != nil {
				b.Fatal(err)
			}
			in = out
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
		} else {
			f, err := os.CreateTemp(dir, "synth-*.jsonl")
			if err != nil {
				b.Fatal(err)
			}
			defer os.Remove(f.Name())
			defer f.Close()
			cmd.Stdout = f
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				b.Fatal(err)
			}
			in = f
		}
		var fileRSS atomic.Int64
		done := make(chan struct{})
		go func() {
			for {
				fileRSS.Store(max(fileRSS.Load(), procStatus("RssFile")))
				select {
				case <-done:
					return
				case <-time.After(200 * time.Millisecond):
				}
			}
		}()
		start := time.Now()
		res, err := Verify(in, Options{Mem: mem, Dir: dir})
		elapsed := time.Since(start)
		close(done)
		if err != nil {
			b.Fatal(err)
		}
		if pipe {
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
		}
		if res.Verdict != Accept || res.Stats.Events != int64(s.events) || res.Stats.Spills+int64(res.Stats.Parts) == 0 {
			b.Fatalf("%s (%d events, %d spills, %d parts)", res.Line(), res.Stats.Events, res.Stats.Spills, res.Stats.Parts)
		}
		b.ReportMetric(float64(res.Stats.Events)/elapsed.Seconds(), "events/s")
		b.ReportMetric(float64(procStatus("VmHWM"))/(1<<20), "MiB-peak-RSS")
		b.ReportMetric(float64(fileRSS.Load())/(1<<20), "MiB-peak-file-RSS")
		b.ReportMetric(float64(res.Stats.Spills), "spills")
		b.ReportMetric(float64(res.Stats.Parts), "parts")
		b.ReportMetric(elapsed.Seconds(), "s/verify")
	}
}
