package explore

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
)

// cancelling stops its run (cancels ctx) at the given call of Next, in
// the middle of a level.
type cancelling struct {
	rotor
	at     int64
	calls  *atomic.Int64
	cancel context.CancelFunc
}

func (m cancelling) Next(s *rotorState, a int, t *rotorState) bool {
	if m.calls.Add(1) == m.at {
		m.cancel()
	}
	return m.rotor.Next(s, a, t)
}

// A run interrupted, by MaxDepth or by cancellation in the middle of a
// level, and then resumed from its checkpoint gives the result of a run
// never interrupted: counts, coverage, sometimes, and the same trace;
// in memory and on disk, passing and failing. A finished run removes its
// checkpoint.
func TestCheckpointResume(t *testing.T) {
	for _, m := range []rotor{{n: 6, bad: -1}, {n: 6, bad: 9}} {
		for _, opts := range []Options{{Workers: 2}, {Workers: 1, ForceDisk: true, MemBudget: 1}} {
			want := zeroTimes(run(t, m, opts))
			for _, stop := range []string{"max-depth", "cancel", "kill"} {
				dir := filepath.Join(t.TempDir(), "ckpt")
				first := opts
				first.Checkpoint = dir
				ctx, cancel := context.WithCancel(context.Background())
				var model Machine[rotorState, int] = m
				switch stop {
				case "max-depth":
					first.MaxDepth = 4
				case "cancel", "kill":
					model = cancelling{rotor: m, at: 300, calls: new(atomic.Int64), cancel: cancel}
				}
				r, err := Run(ctx, model, first)
				cancel()
				if err != nil || r.Verdict != Incomplete {
					t.Fatalf("%+v %s: %v %v", m, stop, err, r.Verdict)
				}
				data, err := os.ReadFile(filepath.Join(dir, "meta.json"))
				var meta checkpointMeta
				if err != nil || json.Unmarshal(data, &meta) != nil || meta.Levels < 2 || meta.Levels > 10 {
					t.Fatalf("%+v %s: checkpoint %v %+v", m, stop, err, meta)
				}
				if stop == "kill" {
					// As if killed while writing the next level: bytes
					// past the checkpoint and a stray frontier file.
					f, _ := os.OpenFile(filepath.Join(dir, "levels"), os.O_WRONLY|os.O_APPEND, 0)
					f.Write([]byte{0xff, 0xff, 1, 2, 3})
					f.Close()
					os.WriteFile(filepath.Join(dir, "frontier-99"), []byte{9, 9}, 0o644)
				}
				again := opts
				again.Checkpoint = dir
				got := zeroTimes(run(t, m, again))
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%+v %s %+v: resumed\n%+v\nuninterrupted\n%+v", m, stop, opts, got, want)
				}
				if _, err := os.Stat(filepath.Join(dir, "meta.json")); !os.IsNotExist(err) {
					t.Fatalf("%+v %s: checkpoint left after a finished run: %v", m, stop, err)
				}
			}
		}
	}
}

// A checkpoint of another model or other options is refused.
func TestCheckpointRefusesOther(t *testing.T) {
	dir := t.TempDir()
	r := run(t, rotor{n: 6, bad: -1}, Options{Checkpoint: dir, MaxDepth: 2})
	if r.Verdict != Incomplete {
		t.Fatal(r.Verdict)
	}
	if _, err := Run(context.Background(), rotor{n: 6, bad: 9}, Options{Checkpoint: dir}); err == nil {
		t.Error("resumed another model's checkpoint")
	}
	if _, err := Run(context.Background(), rotor{n: 6, bad: -1}, Options{Checkpoint: dir, NoDeadlock: true}); err == nil {
		t.Error("resumed with other options")
	}
	r = run(t, rotor{n: 6, bad: -1}, Options{Checkpoint: dir, Workers: 1})
	mustPass(t, r)
}
