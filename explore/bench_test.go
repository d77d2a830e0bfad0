package explore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"testing"
)

// benchModel is a product of 4 counters of 64 values: 64⁴ = 16,777,216
// states over 4·63 = 252 levels, 8 bytes each, and 4·64³·63 = 66,060,288
// steps. It is cheap on purpose, so the numbers measure the engine.
func benchModel() Model[uint64, int] { return counters{k: 4, n: 64} }

// benchRun reports distinct states per second, the bytes per distinct
// state the process held at the peak (Stats.BytesPerState) and, for the
// memory tier, the seen-set's bytes per state and the trace keys' bytes
// per state.
func benchRun(b *testing.B, opts Options) {
	var (
		res        *Result[uint64, int]
		seen, keys int64
	)
	var perState float64
	for b.Loop() {
		debug.FreeOSMemory() // the run before returns its memory
		e, err := newEngine(benchModel(), opts)
		if err != nil {
			b.Fatal(err)
		}
		res, err = e.run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if e.seen != nil {
			seen = e.seen.bytes()
		}
		keys = e.trace.bytes()
		perState = max(perState, res.Stats.BytesPerState)
		if err := e.close(); err != nil {
			b.Fatal(err)
		}
	}
	if res.Verdict != Pass || res.Stats.Distinct != 1<<24 || res.Stats.Generated != 66060288 {
		b.Fatalf("%v %+v", res.Verdict, res.Stats)
	}
	n := float64(res.Stats.Distinct)
	b.ReportMetric(n/(b.Elapsed().Seconds()/float64(b.N)), "distinct/s")
	b.ReportMetric(perState, "B/state")
	if seen > 0 {
		b.ReportMetric(float64(seen)/n, "seen-B/state")
	}
	b.ReportMetric(float64(keys)/n, "trace-B/state")
}

func BenchmarkRunMem(b *testing.B) {
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			benchRun(b, Options{Workers: w})
		})
	}
}

// BenchmarkRunDisk keeps the seen-set on disk from the start, with the
// default 32 MiB cache in front of the run files: the 16.7M fingerprints are
// written out in about six sorted runs.
func BenchmarkRunDisk(b *testing.B) {
	benchRun(b, Options{Workers: 2, ForceDisk: true})
}

// benchState is a typical fixed-size state: program counters, flags and a
// counter.
type benchState struct {
	PC    [4]uint8
	Flag  [4]bool
	Turn  uint8
	Count uint32
}

type benchHand struct{}

func (benchHand) Encode(s *benchState, buf []byte) []byte {
	buf = append(buf, s.PC[:]...)
	for _, f := range s.Flag {
		buf = append(buf, boolByte(f))
	}
	buf = append(buf, s.Turn)
	return binary.LittleEndian.AppendUint32(buf, s.Count)
}

func (benchHand) Decode(b []byte, s *benchState) error {
	if len(b) != 13 {
		return errors.New("bad encoding")
	}
	copy(s.PC[:], b)
	for i := range s.Flag {
		s.Flag[i] = b[4+i] != 0
	}
	s.Turn = b[8]
	s.Count = binary.LittleEndian.Uint32(b[9:])
	return nil
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// BenchmarkCodec compares the default codecs (encoding/binary, and the
// memory copy used when the state's layout is its encoding) with a
// hand-written one on a 13-byte state: what a model saves in code it pays
// per generated state (Encode) and per expanded state (Decode).
func BenchmarkCodec(b *testing.B) {
	s := benchState{PC: [4]uint8{1, 2, 3, 4}, Flag: [4]bool{true, false, true, false}, Turn: 2, Count: 77}
	for _, c := range []struct {
		name  string
		codec Codec[benchState]
	}{{"hand", benchHand{}}, {"binary", binaryCodec[benchState]{}}} {
		buf := c.codec.Encode(&s, nil)
		b.Run(c.name+"/encode", func(b *testing.B) {
			for b.Loop() {
				buf = c.codec.Encode(&s, buf[:0])
			}
		})
		b.Run(c.name+"/decode", func(b *testing.B) {
			var d benchState
			for b.Loop() {
				if err := c.codec.Decode(buf, &d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// A state without padding is copied (memCodec): the same bytes as
	// encoding/binary writes.
	p := benchPacked{Count: 77, PC: [4]uint8{1, 2, 3, 4}, Flag: [4]bool{true, false, true, false}, Turn: [4]uint8{2}}
	mc, ok := newMemCodec[benchPacked]()
	if !ok {
		b.Fatal("benchPacked has padding")
	}
	buf := mc.Encode(&p, nil)
	b.Run("memory/encode", func(b *testing.B) {
		for b.Loop() {
			buf = mc.Encode(&p, buf[:0])
		}
	})
	b.Run("memory/decode", func(b *testing.B) {
		var d benchPacked
		for b.Loop() {
			if err := mc.Decode(buf, &d); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchPacked is benchState laid out without padding.
type benchPacked struct {
	Count uint32
	PC    [4]uint8
	Flag  [4]bool
	Turn  [4]uint8
}
