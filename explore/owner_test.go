//go:build unix

package explore

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHelperHoldDir is not a test: run by TestOrphans in a child process,
// it starts a disk-tier run in $CUTCHECK_HOLD_DIR and never finishes it.
func TestHelperHoldDir(t *testing.T) {
	dir := os.Getenv("CUTCHECK_HOLD_DIR")
	if dir == "" {
		t.Skip("helper for TestOrphans")
	}
	_, _ = Run(context.Background(), Model[uint64, int](counters{k: 6, n: 250}), Options{Workers: 1, Dir: dir, ForceDisk: true})
}

// Reference: issue 10, finding 6. A run killed with SIGKILL leaves its
// directory behind; RemoveOrphans removes it, and leaves alone the
// directories of live runs, unmarked directories and anything else in a
// shared --dir.
func TestOrphans(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldDir$")
	cmd.Env = append(os.Environ(), "CUTCHECK_HOLD_DIR="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }() // whatever happens below
	var held string
	for deadline := time.Now().Add(20 * time.Second); held == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		m, _ := filepath.Glob(filepath.Join(dir, dirPrefix+"*", ownerFile))
		for _, f := range m {
			if data, _ := os.ReadFile(f); len(data) > 0 {
				held = filepath.Dir(f)
			}
		}
	}
	if held == "" {
		t.Fatal("the helper never marked its directory")
	}
	if got, err := RemoveOrphans(dir); err != nil || len(got) != 0 {
		t.Fatalf("while its owner runs: removed %v, %v", got, err)
	}
	cmd.Process.Kill() // SIGKILL: no chance to clean up
	cmd.Wait()

	// Beside the orphan: a live run's directory, an unmarked one, a file.
	var live workDir
	live.parent = dir
	livePath, err := live.get()
	if err != nil {
		t.Fatal(err)
	}
	defer live.remove()
	unmarked := filepath.Join(dir, dirPrefix+"unmarked")
	if err := os.Mkdir(unmarked, 0o755); err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(user, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}

	got, err := RemoveOrphans(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Path != held || got[0].PID != cmd.Process.Pid {
		t.Fatalf("removed %+v, want %s of process %d", got, held, cmd.Process.Pid)
	}
	for _, p := range []string{livePath, unmarked, user} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := os.Stat(held); !os.IsNotExist(err) {
		t.Errorf("orphan %s still there: %v", held, err)
	}
	if !strings.HasPrefix(filepath.Base(livePath), dirPrefix) {
		t.Errorf("run directory %s", livePath)
	}
}

// Two runs sharing a --dir each get their own directory and leave the
// other's alone.
func TestSharedDir(t *testing.T) {
	dir := t.TempDir()
	done := make(chan *Result[uint64, int], 2)
	for range 2 {
		go func() {
			r, err := Run(context.Background(), Model[uint64, int](counters{k: 3, n: 40}), Options{Workers: 2, Dir: dir, ForceDisk: true})
			if err != nil {
				t.Error(err)
			}
			done <- r
		}()
	}
	a, b := <-done, <-done
	if a == nil || b == nil || a.Stats.Distinct != 40*40*40 || b.Stats.Distinct != a.Stats.Distinct {
		t.Fatalf("results %+v %+v", a, b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left %v", ents)
	}
}
