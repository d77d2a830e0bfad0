package cli

import (
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/cutcheck/cutcheck/explore"
)

// engineFlags are the explorer's settings, shared by check, run and reproduce.
type engineFlags struct {
	workers    int
	mem        string
	dir        string
	seen       string
	progress   time.Duration
	noDeadlock bool
	maxDepth   int
	symmetry   bool
	noGrade    bool
	// checkSymmetry verifies the model's symmetry on every state of a
	// concrete run (explore.Options.CheckSymmetry).
	checkSymmetry bool
	// running names the spec or phase being run, for progress lines.
	running atomic.Pointer[string]
}

// run names what the progress lines that follow are about.
func (e *engineFlags) run(name string) { e.running.Store(&name) }

func (e *engineFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&e.workers, "workers", 0, "worker goroutines (0 = all CPUs)")
	fs.StringVar(&e.mem, "mem", "", "memory budget, e.g. 512MiB or 4GiB; past it the seen-set and queue spill to --dir (default: 3/4 of the machine's memory)")
	fs.StringVar(&e.dir, "dir", "", "directory for the disk tier (default: a temporary directory, removed at the end)")
	fs.StringVar(&e.seen, "seen", "mem", "seen-set tier: mem (spill only past --mem) or disk (disk from the start)")
	fs.DurationVar(&e.progress, "progress", 10*time.Second, "interval between progress lines on stderr (0 = none)")
	fs.BoolVar(&e.noDeadlock, "no-deadlock", false, "do not report states without successors")
	fs.IntVar(&e.maxDepth, "max-depth", 0, "stop after this many BFS levels (0 = no limit)")
	fs.BoolVar(&e.noGrade, "no-grade", false, "keep a seen-set even when the model is graded (every step one grade up, so no state recurs across levels and none is needed); to compare counts")
	fs.BoolVar(&e.symmetry, "symmetry", false, "count states up to the model's symmetry (value renaming for the shipped protocols), as TLC's SYMMETRY; fewer states, same verdicts, concrete traces")
	fs.BoolVar(&e.checkSymmetry, "check-symmetry", false, "explore every concrete state and verify the model's symmetry on each (what --symmetry relies on); a failure is an error naming the state and step")
}

// options turns the flags into explorer options; progress lines go to stderr.
func (e *engineFlags) options(stderr io.Writer) (explore.Options, error) {
	o := explore.Options{Workers: e.workers, Dir: e.dir, NoDeadlock: e.noDeadlock, MaxDepth: e.maxDepth, Progress: e.progress, Symmetry: e.symmetry, NoGrade: e.noGrade}
	o.CheckSymmetry = e.checkSymmetry
	if e.symmetry && e.checkSymmetry {
		return o, fmt.Errorf("--check-symmetry explores every concrete state; it cannot be combined with --symmetry")
	}
	if e.workers < 0 {
		return o, fmt.Errorf("--workers must be ≥ 0, got %d", e.workers)
	}
	if e.maxDepth < 0 {
		return o, fmt.Errorf("--max-depth must be ≥ 0, got %d", e.maxDepth)
	}
	if e.progress < 0 || e.progress > 0 && e.progress < minProgress {
		return o, fmt.Errorf("--progress must be 0 (no progress lines) or at least %v, got %v", minProgress, e.progress)
	}
	if fi, err := os.Stat(e.dir); e.dir != "" && err == nil && !fi.IsDir() {
		return o, fmt.Errorf("--dir: %s is a file; give a directory (it is made if missing)", e.dir)
	}
	switch e.seen {
	case "mem":
	case "disk":
		o.ForceDisk = true
	default:
		return o, fmt.Errorf("--seen must be mem or disk, got %q", e.seen)
	}
	if e.mem != "" {
		n, err := parseBytes(e.mem)
		if err != nil {
			return o, fmt.Errorf("--mem: %v", err)
		}
		if n < minBudget {
			return o, fmt.Errorf("--mem: %s is below %s, the least budget a run can keep to (the runtime and the disk tier's buffers need that much)", e.mem, "128MiB")
		}
		// A budget the machine cannot give would be killed, not spilled.
		if total := memTotal(); total > 0 && n > total {
			return o, fmt.Errorf("--mem: %s is more than this machine's memory (%s); a run would be killed before it spilled to disk", e.mem, size(total))
		}
		o.MemBudget = n
	} else {
		o.MemBudget = defaultBudget()
	}
	if e.progress > 0 {
		o.OnProgress = func(s explore.Stats) { fmt.Fprintln(stderr, progressLine(e.running.Load(), s)) }
	}
	removeOrphans(e.dir, stderr)
	return o, nil
}

// minProgress is the shortest interval between progress lines: shorter
// ones flood the terminal without saying more.
const minProgress = 100 * time.Millisecond

// minBudget is the least --mem: below it the Go runtime and the disk
// tier's fixed buffers alone would exceed the budget.
const minBudget = 128 << 20

func progressLine(running *string, s explore.Stats) string {
	tier := ""
	if s.OnDisk {
		tier = "  (disk)"
	}
	what := ""
	if running != nil {
		what = *running + ": "
	}
	return fmt.Sprintf("progress: %sdepth %d  distinct %s  generated %s  queue %s  %s states/s  %s%s",
		what, s.Depth, count(s.Distinct), count(s.Generated), count(s.Queue), count(uint64(s.Rate())), s.Elapsed.Round(time.Second), tier)
}

// count prints 1234567 as 1.23M.
func count(n uint64) string {
	switch {
	case n >= 1e9:
		return strconv.FormatFloat(float64(n)/1e9, 'f', 2, 64) + "G"
	case n >= 1e6:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 2, 64) + "M"
	case n >= 1e4:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatUint(n, 10)
}

// parseBytes reads sizes like 512MiB, 4GiB, 100MB, 1.5G or a plain byte
// count. The number is read exactly (no NaN, no infinity), and the size
// must be a whole, positive number of bytes that fits in an int64.
func parseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1}}
	bad := fmt.Errorf("%q is not a size like 512MiB or 4GiB", s)
	num, mult := s, int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	num = strings.TrimSpace(num)
	if num == "" || strings.ContainsAny(num, "_/") { // big.Rat reads 1_000 and 1/2 too
		return 0, bad
	}
	// ParseFloat first: it refuses NaN and Inf spelled out, and it bounds
	// the exponent before big.Rat would compute 10 to its power exactly.
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(num, "nNiI") {
		return 0, bad
	}
	if f*float64(mult) >= 1<<63 {
		return 0, fmt.Errorf("%q is too large (at most 8EiB)", s)
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, bad
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	switch {
	case r.Sign() <= 0:
		return 0, fmt.Errorf("%q is not a positive size", s)
	case !r.IsInt():
		return 0, fmt.Errorf("%q is not a whole number of bytes", s)
	case !r.Num().IsInt64():
		return 0, fmt.Errorf("%q is too large (at most 8EiB)", s)
	}
	return r.Num().Int64(), nil
}

// defaultBudget is three quarters of the machine's memory, so that a run too
// large for it spills to disk instead of being killed; 0 (unbounded) where
// /proc/meminfo cannot be read.
func defaultBudget() int64 { return memTotal() / 4 * 3 }

// memTotal is the machine's memory, or 0 where /proc/meminfo cannot be read.
func memTotal() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}
