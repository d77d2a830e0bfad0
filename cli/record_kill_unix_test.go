//go:build unix

package cli

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kill -9 of a record run at random points leaves a slot (until the server
// notices), a publication, signal rows, the spool and partial outputs;
// clean --db then removes what is on the server and clean the files, each
// said, and nothing is left.
func TestRecordKilledThenCleaned(t *testing.T) {
	url, c := recordDB(t)
	ctx := context.Background()
	spool, outs := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", spool)
	rng := rand.New(rand.NewPCG(7, 7))
	leftFiles := 0
	for try := 0; try < 4; try++ {
		cmd := exec.Command(os.Args[0], "record", "--db", url, "--table", "items", "--populate", "3000", "--chunk-size", "20",
			"--workload", "300", "--window-hold", "2ms", "--bundle", filepath.Join(outs, "b.jsonl"), "--events", filepath.Join(outs, "e.jsonl"))
		cmd.Env = append(os.Environ(), "CUTCHECK_AS_COMMAND=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// once the run has written a signal row, at a random moment after
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			var n int
			if c.QueryRow(ctx, "SELECT count(*) FROM debezium_signal").Scan(&n); n > 0 {
				break
			}
		}
		time.Sleep(time.Duration(rng.IntN(600)) * time.Millisecond)
		cmd.Process.Kill()
		if err := cmd.Wait(); err == nil {
			t.Fatalf("try %d: the run ended before it was killed: %s", try, stderr.String())
		}
		spools, _ := filepath.Glob(filepath.Join(spool, "cutcheck-record-*"))
		partial, _ := filepath.Glob(filepath.Join(outs, ".*.tmp-*"))
		leftFiles += len(spools) + len(partial)
	}
	if leftFiles == 0 {
		t.Fatalf("the killed runs left no file: the test killed nothing mid-run")
	}
	var pubs, rows int
	c.QueryRow(ctx, "SELECT count(*) FROM pg_publication").Scan(&pubs)
	c.QueryRow(ctx, "SELECT count(*) FROM debezium_signal").Scan(&rows)
	if pubs == 0 || rows == 0 {
		t.Fatalf("the killed runs left %d publications and %d signal rows: nothing for clean to do", pubs, rows)
	}
	// The server drops a killed run's temporary slot when it notices.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var n int
		if c.QueryRow(ctx, "SELECT count(*) FROM pg_replication_slots WHERE active AND database = current_database()").Scan(&n); n == 0 {
			break
		}
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"clean", "--db", url, "--outputs", outs, "--out", ""}, &out, &errb); code != exitOK {
		t.Fatalf("clean: exit %d: %s", code, errb.String())
	}
	said := out.String()
	for _, want := range []string{"dropped publication cutcheck_", "signal rows of killed runs from ", "dropped table debezium_signal, an empty signalling table record created", "a partial output of process", "removed " + filepath.Join(spool, "cutcheck-record-")} {
		if !strings.Contains(said, want) {
			t.Errorf("clean did not say %q:\n%s", want, said)
		}
	}
	var slots, tables int
	c.QueryRow(ctx, "SELECT count(*) FROM pg_replication_slots WHERE database = current_database()").Scan(&slots)
	c.QueryRow(ctx, "SELECT count(*) FROM pg_publication").Scan(&pubs)
	c.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relname = 'debezium_signal'").Scan(&tables)
	spools, _ := filepath.Glob(filepath.Join(spool, "cutcheck-record-*"))
	partial, _ := filepath.Glob(filepath.Join(outs, ".*.tmp-*"))
	if slots+pubs+tables+len(spools)+len(partial) != 0 {
		t.Errorf("left after clean: %d slots, %d publications, %d signalling tables, spool %v, partial outputs %v", slots, pubs, tables, spools, partial)
	}
}
