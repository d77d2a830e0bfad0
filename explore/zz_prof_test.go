package explore

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZProf(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ZZN"))
	w, _ := strconv.Atoi(os.Getenv("ZZW"))
	disk := os.Getenv("ZZDISK") != ""
	for rep := 0; rep < 2; rep++ {
	c0 := cpuTime()
	t0 := time.Now()
	r, err := Run(context.Background(), Model[uint64, int](counters{k: 4, n: n}), Options{Workers: w, ForceDisk: disk})
	if err != nil { t.Fatal(err) }
	cpu := cpuTime() - c0
	t.Logf("wall %v cpu %v: %.2fM/s wall, %.2fM/cpu-s", time.Since(t0).Round(time.Millisecond), cpu.Round(time.Millisecond), r.Stats.Rate()/1e6, float64(r.Stats.Distinct)/cpu.Seconds()/1e6)
	}
}

