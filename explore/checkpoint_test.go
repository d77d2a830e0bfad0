package explore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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
				meta, err := readMeta(dir)
				if err != nil || meta == nil || meta.Levels < 2 || meta.Levels > 10 {
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

// stoppedCheckpoint leaves an incomplete run's checkpoint in a new directory.
func stoppedCheckpoint(t *testing.T, opts Options) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ckpt")
	opts.Checkpoint, opts.MaxDepth = dir, 3
	if r := run(t, rotor{n: 6, bad: -1}, opts); r.Verdict != Incomplete {
		t.Fatal(r.Verdict)
	}
	return dir
}

// A checkpoint of a search of another identity is refused, naming the
// field that differs; one of another depth limit is continued.
func TestCheckpointRefusesOtherIdentity(t *testing.T) {
	id := Identity{}.With("mutation", "")
	dir := stoppedCheckpoint(t, Options{Identity: id})
	_, err := Run(context.Background(), rotor{n: 6, bad: -1}, Options{Checkpoint: dir, Identity: Identity{}.With("mutation", "early-release")})
	var me *MismatchError
	if !errors.As(err, &me) || me.Field != "mutation" || !strings.Contains(err.Error(), `"early-release" here`) {
		t.Fatalf("other mutation: %v", err)
	}
	_, err = Run(context.Background(), rotor{n: 6, bad: -1}, Options{Checkpoint: dir, Identity: id, NoDeadlock: true})
	if !errors.As(err, &me) || me.Field != "deadlock" {
		t.Fatalf("other deadlock checking: %v", err)
	}
	mustPass(t, run(t, rotor{n: 6, bad: -1}, Options{Checkpoint: dir, Identity: id, MaxDepth: 100}))
}

// A checkpoint file cut short, emptied, or with one bit changed is
// refused as damaged (never extended or trusted), and so is every
// checkpoint after it until the directory is removed.
func TestCheckpointRefusesDamage(t *testing.T) {
	for _, opts := range []Options{{Workers: 2}, {Workers: 1, ForceDisk: true, MemBudget: 1}} {
		for _, damage := range []struct {
			file string
			do   func(data []byte) []byte
		}{
			{"levels", func(b []byte) []byte { return b[:len(b)/2] }},
			{"levels", func(b []byte) []byte { return nil }},
			{"levels", func(b []byte) []byte { b[len(b)-3] ^= 4; return b }},
			{"levels", func(b []byte) []byte { return make([]byte, len(b)) }},
			{"frontier-3", func(b []byte) []byte { b[len(b)/2] ^= 1; return b }},
			{"frontier-3", func(b []byte) []byte { return b[:len(b)-1] }},
			{"frontier-3", func(b []byte) []byte { return append(b, 0) }},
			{"meta.json", func(b []byte) []byte { return []byte(strings.Replace(string(b), `"distinct":`, `"distinct":1`, 1)) }},
			{"meta.json", func(b []byte) []byte { return b[:len(b)/2] }},
		} {
			dir := stoppedCheckpoint(t, opts)
			path := filepath.Join(dir, damage.file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(path, damage.do(data), 0o644)
			again := opts
			again.Checkpoint = dir
			r, err := Run(context.Background(), rotor{n: 6, bad: -1}, again)
			if !errors.Is(err, ErrDamaged) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s damaged: %v %v", damage.file, r, err)
			}
		}
	}
}

// A checkpoint directory a live run holds is refused.
func TestCheckpointInUse(t *testing.T) {
	dir := stoppedCheckpoint(t, Options{})
	held, err := lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), rotor{n: 6, bad: -1}, Options{Checkpoint: dir})
	if !errors.Is(err, ErrInUse) {
		t.Errorf("a held directory: %v", err)
	}
	held.Close()
	mustPass(t, run(t, rotor{n: 6, bad: -1}, Options{Checkpoint: dir}))
}

// A checkpointed run keeps to its budget: levels too large for it are
// expanded in passes, recorded in the checkpoint as they settle, and a run
// stopped and resumed under the budget ends as a run never stopped.
func TestCheckpointKeepsBudget(t *testing.T) {
	n := 14
	if raceEnabled {
		n = 12
	}
	m := Model[uint32, int](subsets{n: n})
	want, _ := runEngine(t, m, Options{Workers: 2})
	dir := filepath.Join(t.TempDir(), "ckpt")
	opts := Options{Workers: 2, MemBudget: 256 << 10, Checkpoint: dir}
	first := opts
	first.MaxDepth = n/2 + 1
	stopped, e := runEngineOf(t, m, first)
	if stopped.Verdict != Incomplete || e.mostPasses < 2 {
		t.Fatalf("stopped run: %v, at most %d passes a level", stopped.Verdict, e.mostPasses)
	}
	resumed := -1
	opts.OnResume = func(level int, _ uint64) { resumed = level }
	got, e := runEngineOf(t, m, opts)
	if e.mostPasses < 2 || resumed != first.MaxDepth {
		t.Errorf("resumed run: from level %d, at most %d passes a level", resumed, e.mostPasses)
	}
	w, g := zeroTimes(want), zeroTimes(got)
	if !reflect.DeepEqual(w, g) {
		t.Errorf("resumed under the budget:\n got %+v\nwant %+v", g, w)
	}
}
