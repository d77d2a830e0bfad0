package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// recordDB gives the command tests a database of their own on the test
// server (.ci/postgres), so `clean --db` there touches no other test's run.
func recordDB(t *testing.T) (url string, c *pgx.Conn) {
	t.Helper()
	base := os.Getenv("CUTCHECK_PG_URL")
	if base == "" {
		if os.Getenv("CUTCHECK_REQUIRE_POSTGRES") == "1" {
			t.Fatal("CUTCHECK_PG_URL is not set and CUTCHECK_REQUIRE_POSTGRES=1: start a server with . .ci/postgres")
		}
		t.Skip("no PostgreSQL: set CUTCHECK_PG_URL (. .ci/postgres starts a throwaway one)")
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer admin.Close(ctx)
	admin.Exec(ctx, "DROP DATABASE IF EXISTS cutcheck_cli_test WITH (FORCE)")
	if _, err := admin.Exec(ctx, "CREATE DATABASE cutcheck_cli_test"); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		a, err := pgx.Connect(context.Background(), base)
		if err == nil {
			a.Exec(context.Background(), "DROP DATABASE IF EXISTS cutcheck_cli_test WITH (FORCE)")
			a.Close(context.Background())
		}
	})
	cfg, err := pgx.ParseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = "cutcheck_cli_test"
	c, err = pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	url = fmt.Sprintf("host=%s port=%d user=%s dbname=cutcheck_cli_test sslmode=disable", cfg.Host, cfg.Port, cfg.User)
	if cfg.Password != "" {
		url += " password=" + cfg.Password
	}
	return url, c
}

// The whole loop on the command line: record a run, certify its bundle
// (Accept), a faulted one (Reject), bad input's exit codes, and clean
// dropping a slot and a publication a killed run left.
func TestRecordCommand(t *testing.T) {
	url, c := recordDB(t)
	ctx := context.Background()
	dir := t.TempDir()
	bundle, events, notes := filepath.Join(dir, "b.jsonl"), filepath.Join(dir, "e.jsonl"), filepath.Join(dir, "n.jsonl")
	var out, errb bytes.Buffer
	code := Main([]string{"record", "--db", url, "--table", "items", "--populate", "300", "--chunk-size", "64",
		"--workload", "300", "--bundle", bundle, "--events", events, "--notifications", notes}, &out, &errb)
	if code != exitOK {
		t.Fatalf("record: exit %d: %s", code, errb.String())
	}
	// five chunks of rows, and the window whose read found none above the last
	if !strings.Contains(out.String(), "recorded 6 chunks: ") {
		t.Errorf("record said %q", out.String())
	}
	out.Reset()
	if code := Main([]string{"certify", bundle}, &out, &errb); code != exitOK || !strings.HasPrefix(out.String(), "Accept: ") {
		t.Fatalf("certify: exit %d: %s%s", code, out.String(), errb.String())
	}
	// The Debezium events and notifications: the same cut (frontier, scope,
	// digest), with nothing left out.
	accept := out.String()
	out.Reset()
	errb.Reset()
	if code := Main([]string{"certify", "--from", "debezium", "--table", "items", "--notifications", notes, events}, &out, &errb); code != exitOK ||
		errb.Len() > 0 || !strings.HasPrefix(out.String(), accept[:strings.Index(accept, ";")]) {
		t.Fatalf("certify --from debezium: exit %d: %s%s; the bundle: %s", code, out.String(), errb.String(), accept)
	}
	ev, _ := os.ReadFile(events)
	if !bytes.Contains(ev, []byte(`"connector":"postgresql"`)) || !bytes.Contains(ev, []byte(`"op":"r"`)) || !bytes.Contains(ev, []byte(`"snapshot-window-close"`)) {
		t.Errorf("the events are not Debezium PostgreSQL envelopes with snapshot rows and watermarks:\n%.400s", ev)
	}

	// copy-dropped loses every chunk row: the table, the oracle, says so
	// (exit 1), and the bundle is written as recorded.
	out.Reset()
	errb.Reset()
	os.Remove(bundle)
	if code := Main([]string{"record", "--db", url, "--table", "items", "--chunk-size", "64",
		"--fault", "copy-dropped", "--bundle", bundle}, &out, &errb); code != exitViolated ||
		!strings.Contains(errb.String(), "the oracle check failed: the emitted stream differs from the table at key ") ||
		!strings.Contains(errb.String(), "the files were written as recorded, and do not describe the table") {
		t.Fatalf("record --fault copy-dropped: exit %d: %s", code, errb.String())
	}
	out.Reset()
	if code := Main([]string{"certify", bundle}, &out, &errb); code != exitViolated || !strings.Contains(out.String(), "the prefix is the window-discard emission") {
		t.Fatalf("certify of copy-dropped: exit %d: %s%s", code, out.String(), errb.String())
	}

	errb.Reset()
	if code := Main([]string{"record", "--db", url, "--schedule", bundle, "--notifications", notes, "--bundle", bundle}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "--notifications is for a backfill") {
		t.Errorf("--notifications with --schedule: exit %d, %q", code, errb.String())
	}

	c.Exec(ctx, "CREATE TABLE nokey (a int)")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--table", "nokey"}, exitUsage, "has no primary key"},
		{[]string{"--table", "items", "--chunk-size", "0"}, exitUsage, "--chunk-size must be at least 1"},
		{[]string{"--table", "items", "--fault", "nope"}, exitUsage, "unknown fault"},
		{[]string{"--table", "items", "--rate", "100"}, exitUsage, "--rate is replaced by --workload RATE"},
		{[]string{"--table", "items", "--clients", "4"}, exitUsage, "--clients is for the workload: give --workload RATE too"},
		{[]string{"--table", "items", "--workload", "0"}, exitUsage, "--workload 0 runs no workload"},
		{[]string{"--table", "items", "--events", filepath.Join(dir, "no", "such", "e.jsonl")}, exitUsage, "there is no directory " + filepath.Join(dir, "no", "such")},
		{[]string{"--table", "items", "--schedule", filepath.Join(dir, "missing.json")}, exitUsage, "--schedule " + filepath.Join(dir, "missing.json") + ": no such file"},
		{[]string{"--table", "items", "--signal-table", "no_such_schema.sig"}, exitUsage, "schema no_such_schema does not exist"},
	} {
		errb.Reset()
		args := append([]string{"record", "--db", url, "--bundle", bundle}, tc.args...)
		if code := Main(args, &out, &errb); code != tc.code || !strings.Contains(errb.String(), tc.want) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want exit %d and one line with %q", tc.args, code, errb.String(), tc.code, tc.want)
		}
	}
	errb.Reset()
	if code := Main([]string{"record", "--db", "postgres://u@127.0.0.1:1/x?connect_timeout=2", "--table", "t", "--bundle", bundle}, &out, &errb); code != exitError || !strings.Contains(errb.String(), "cannot reach the server") {
		t.Errorf("unreachable server: exit %d, %q", code, errb.String())
	}

	// What a killed run with a permanent slot would leave.
	if _, err := c.Exec(ctx, "SELECT pg_create_logical_replication_slot('cutcheck_left_behind', 'pgoutput')"); err != nil {
		t.Fatal(err)
	}
	c.Exec(ctx, "CREATE PUBLICATION cutcheck_left_behind FOR TABLE items")
	out.Reset()
	if code := Main([]string{"clean", "--db", url}, &out, &errb); code != exitOK {
		t.Fatalf("clean: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "dropped publication cutcheck_left_behind") || !strings.Contains(out.String(), "dropped slot cutcheck_left_behind") {
		t.Errorf("clean said %q", out.String())
	}
	var n int
	c.QueryRow(ctx, "SELECT (SELECT count(*) FROM pg_replication_slots WHERE database = current_database()) + (SELECT count(*) FROM pg_publication)").Scan(&n)
	if n != 0 {
		t.Errorf("%d slots or publications left after clean", n)
	}
}

// A classic counterexample replayed on PostgreSQL: with the mutation made by
// the real capture, the sink at rest differs from the table as the model
// said (the resurrected row or the lost one) and certify rejects the run;
// the correct capture driven through the same schedule agrees with the
// table and is accepted.
// Reference: §10 kill matrix, Def. 6.2, S-OBS.
func TestRecordReplaysCounterexamples(t *testing.T) {
	url, _ := recordDB(t)
	dir := t.TempDir()
	one := []string{"--keys", "1", "--events", "2", "--chunks", "1"}
	for i, tc := range []struct {
		mutation, diff string
		bounds         []string
	}{
		{"no-discard", `key 0: the table holds ⊥, the sink {"id":0,"v":1} (a resurrected row)`, one},
		{"copy-dropped", `key 0: the table holds {"id":0,"v":1}, the sink ⊥ (a lost row)`, one},
		{"late-start", `key 0: the table holds {"id":0,"v":1}, the sink ⊥ (a lost row)`, one},
		{"low-edge-off-by-one", `(a resurrected row)`, one},
		{"high-edge-off-by-one", `(a resurrected row)`, one},
		// two keys in two chunks: the trace stops inside the first, whose
		// keys are all the claim covers
		{"copy-dropped", `(a lost row)`, []string{"--keys", "2", "--events", "3", "--chunks", "2"}},
		// early-release's violation is transient (closed-unit-cut): at rest
		// the sink agrees, and the cut at the frontier is certified
		{"early-release", "", one},
	} {
		t.Run(tc.mutation+strings.Join(tc.bounds, ""), func(t *testing.T) {
			trace := filepath.Join(dir, fmt.Sprintf("%d.json", i))
			var out, errb bytes.Buffer
			if code := Main(append(append([]string{"check", "classic"}, tc.bounds...), "--mutation", tc.mutation,
				"--trace-json", trace), &out, &errb); code != exitViolated {
				t.Fatalf("check: exit %d: %s", code, errb.String())
			}
			for _, fault := range []string{tc.mutation, ""} {
				bundle := filepath.Join(dir, fmt.Sprintf("%d%s.bundle", i, fault))
				args := []string{"record", "--db", url, "--table", fmt.Sprintf("replay_%d_%t", i, fault == ""), "--schedule", trace, "--bundle", bundle}
				if fault != "" {
					args = append(args, "--fault", fault)
				}
				out.Reset()
				errb.Reset()
				code := Main(args, &out, &errb)
				if fault == "" && tc.mutation == "late-start" {
					// the schedule itself is the fault: no correct capture follows it
					if code != exitUsage || !strings.Contains(errb.String(), "only a capture with --fault late-start does") {
						t.Errorf("the correct capture on a late start's schedule: exit %d, %q", code, errb.String())
					}
					continue
				}
				if code != exitOK {
					t.Fatalf("record %v: exit %d: %s", args, code, errb.String())
				}
				story := out.String()
				var cert bytes.Buffer
				code = Main([]string{"certify", bundle}, &cert, &errb)
				if fault == "" || tc.diff == "" {
					if !strings.Contains(story, "they agree on every key") || code != exitOK {
						t.Errorf("the correct capture on the same schedule: %s\ncertify: exit %d %s", story, code, cert.String())
					}
					continue
				}
				if !strings.Contains(story, tc.diff) {
					t.Errorf("the real table against the sink: want %q in\n%s", tc.diff, story)
				}
				if code != exitViolated || !strings.HasPrefix(cert.String(), "Reject: S4") {
					t.Errorf("certify: exit %d %s", code, cert.String())
				}
			}
		})
	}
	// A trace the database cannot follow is refused in one line.
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"property":"p","steps":[{"action":"","view":{"log":null,"source":[{"key":0,"value":0}]}},
		{"action":"source commits k0 := ⊥ at position 1","view":{"log":[{"pos":1,"key":0,"value":0,"txn":1}],"source":[{"key":0,"value":0}]}}]}`), 0o644)
	var out, errb bytes.Buffer
	code := Main([]string{"record", "--db", url, "--table", "replay_bad", "--schedule", bad, "--bundle", filepath.Join(dir, "bad.bundle")}, &out, &errb)
	if code != exitUsage || !strings.Contains(errb.String(), "deletes the absent key 0") || strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("an undrivable trace: exit %d, %q", code, errb.String())
	}
}

// Ctrl-C in the middle of a recording: exit 4, no file written, and no slot,
// publication or signal row left on the server.
func TestRecordInterrupted(t *testing.T) {
	url, c := recordDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	old := interrupted
	interrupted = func() (context.Context, context.CancelFunc) { return ctx, cancel }
	t.Cleanup(func() { interrupted = old; cancel() })
	go func() {
		// press Ctrl-C once the second chunk's low watermark is written
		for ctx.Err() == nil {
			var n int
			c2, err := pgx.Connect(ctx, url)
			if err == nil {
				c2.QueryRow(ctx, "SELECT count(*) FROM debezium_signal").Scan(&n)
				c2.Close(context.Background())
			}
			if n >= 3 {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	dir := t.TempDir()
	bundle := filepath.Join(dir, "b.jsonl")
	var out, errb bytes.Buffer
	code := Main([]string{"record", "--db", url, "--table", "items", "--populate", "100", "--chunk-size", "10",
		"--window-hold", "50ms", "--bundle", bundle}, &out, &errb)
	if code != exitIncomplete || !strings.Contains(errb.String(), "interrupted; the slot, the publication and the signal rows were removed") {
		t.Fatalf("exit %d, %q", code, errb.String())
	}
	if _, err := os.Stat(bundle); err == nil {
		t.Errorf("an interrupted run wrote %s", bundle)
	}
	bg := context.Background()
	var slots, pubs, rows int
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c.QueryRow(bg, "SELECT count(*) FROM pg_replication_slots WHERE database = current_database()").Scan(&slots)
		if slots == 0 || time.Now().After(deadline) {
			break
		}
	}
	c.QueryRow(bg, "SELECT count(*) FROM pg_publication").Scan(&pubs)
	c.QueryRow(bg, "SELECT count(*) FROM debezium_signal").Scan(&rows)
	if slots+pubs+rows != 0 {
		t.Errorf("left behind: %d slots, %d publications, %d signal rows", slots, pubs, rows)
	}
}
