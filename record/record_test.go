package record

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cutcheck/cutcheck/certify"
)

// pgURL is the test server (.ci/postgres starts one). Without it the tests
// skip, except under CUTCHECK_REQUIRE_POSTGRES=1, where CI must not leave
// the recorder untested.
func pgURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("CUTCHECK_PG_URL")
	if url == "" {
		if os.Getenv("CUTCHECK_REQUIRE_POSTGRES") == "1" {
			t.Fatal("CUTCHECK_PG_URL is not set and CUTCHECK_REQUIRE_POSTGRES=1: start a server with . .ci/postgres")
		}
		t.Skip("no PostgreSQL: set CUTCHECK_PG_URL (. .ci/postgres starts a throwaway one)")
	}
	return url
}

func sqlConn(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

var tableSeq int

// freshTable names a table of this test (dropped at its end) and its own
// signalling table, so tests can run side by side on one server.
func freshTable(t *testing.T, c *pgx.Conn) (tab, sig string) {
	t.Helper()
	tableSeq++
	tab = fmt.Sprintf("rec_%d_%d", os.Getpid(), tableSeq)
	sig = tab + "_signal"
	ctx := context.Background()
	c.Exec(ctx, "DROP TABLE IF EXISTS "+tab+", "+sig)
	t.Cleanup(func() { c.Exec(context.Background(), "DROP TABLE IF EXISTS "+tab+", "+sig) })
	return tab, sig
}

// noLeftovers checks that nothing of a run stays on the server: no slot or
// publication of this tool, no signal row.
func noLeftovers(t *testing.T, c *pgx.Conn, sig string) {
	t.Helper()
	ctx := context.Background()
	var slots, pubs, rows int
	c.QueryRow(ctx, "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'cutcheck\\_%'").Scan(&slots)
	c.QueryRow(ctx, "SELECT count(*) FROM pg_publication WHERE pubname LIKE 'cutcheck\\_%'").Scan(&pubs)
	c.QueryRow(ctx, "SELECT count(*) FROM "+sig).Scan(&rows)
	if slots != 0 || pubs != 0 || rows != 0 {
		t.Errorf("left behind: %d slots, %d publications, %d signal rows", slots, pubs, rows)
	}
}

func verify(t *testing.T, bundle []byte) *certify.Result {
	t.Helper()
	res, err := certify.Verify(bytes.NewReader(bundle), certify.Options{})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return res
}

func record(t *testing.T, opt Options) (Stats, []byte, []byte) {
	t.Helper()
	var bundle, events bytes.Buffer
	opt.Bundle, opt.Events = &bundle, &events
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := Record(ctx, opt)
	if err != nil {
		t.Fatalf("record: %v", err)
	}
	return st, bundle.Bytes(), events.Bytes()
}

// Clean runs are accepted: for several seeds and chunk sizes, with the
// workload racing the windows, the bundle is a certified virtual cut.
// Reference: 003 §8–§9, main paper Thm 1 (window-discard, §6.2).
func TestCleanRunsAccepted(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	raced := int64(0)
	for _, tc := range []struct {
		seed  int64
		chunk int
	}{{1, 7}, {2, 16}, {3, 50}, {4, 1}} {
		t.Run(fmt.Sprintf("seed%d-chunk%d", tc.seed, tc.chunk), func(t *testing.T) {
			tab, sig := freshTable(t, c)
			st, bundle, _ := record(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: tc.chunk, Populate: 60,
				Workload: Workload{Rate: 1000, Seed: tc.seed}, WindowHold: 2 * time.Millisecond})
			res := verify(t, bundle)
			if res.Verdict != certify.Accept {
				t.Fatalf("verdict %v: %v\nstats %+v", res.Verdict, res.Failure, st)
			}
			if st.Chunks < 2 || st.Rows == 0 || st.Txns == 0 {
				t.Errorf("the run did too little: %+v", st)
			}
			raced += st.Discarded
			noLeftovers(t, c, sig)
		})
	}
	if raced == 0 {
		t.Errorf("no window event ever discarded a buffered row: the race the capture guards against never happened")
	}
}

func TestMain(m *testing.M) {
	os.Exit(m.Run())
}

var _ = strings.Contains
