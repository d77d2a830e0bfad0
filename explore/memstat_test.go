package explore

import (
	"context"
	"runtime"
	"strings"
	"testing"
)

// A run reports the most memory the process held while it ran, all of it
// counted (here a 64 MiB buffer the run knows nothing of), and that over
// its distinct states as bytes per state.
func TestMemoryPeak(t *testing.T) {
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = 1 // touched: held from the system
	}
	m := tape{n: 6, v: 3, flags: 1}
	r, err := Run(context.Background(), m, Options{Workers: 2})
	runtime.KeepAlive(buf)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Stats
	if s.MemPeak < 64<<20 {
		t.Errorf("memory peak %d bytes, less than the 64 MiB held throughout", s.MemPeak)
	}
	if want := float64(s.MemPeak) / float64(s.Distinct); s.BytesPerState != want {
		t.Errorf("bytes per state %v, want %d / %d = %v", s.BytesPerState, s.MemPeak, s.Distinct, want)
	}
	if rep := NewReport(m, r); !strings.Contains(rep.Summary(), "bytes per distinct state") {
		t.Errorf("the summary does not say the bytes per state:\n%s", rep.Summary())
	}
}
