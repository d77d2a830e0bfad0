package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cutcheck/cutcheck/certify"
)

// faultTries bounds the seeded runs a test makes until a fault acts: whether
// an event lands on a window's edge is up to the server's timing, and a
// window-edge fault acts in a minority of runs, so a few tries are not
// enough to provoke it every time. The loop stops at the first run it acts in.
const faultTries = 40

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

// withParam sets a connection parameter in a URL or a key=value string.
func withParam(url, key, value string) string {
	switch {
	case !strings.Contains(url, "://"):
		return url + " " + key + "=" + value
	case strings.Contains(url, "?"):
		return url + "&" + key + "=" + value
	}
	return url + "?" + key + "=" + value
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
	// The server drops a temporary slot when its walsender exits, a moment
	// after the connection closes.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c.QueryRow(ctx, "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'cutcheck\\_%' AND slot_name <> 'cutcheck_busy_test' AND database = current_database()").Scan(&slots)
		if slots == 0 || time.Now().After(deadline) {
			break
		}
	}
	c.QueryRow(ctx, "SELECT count(*) FROM pg_publication WHERE pubname LIKE 'cutcheck\\_%'").Scan(&pubs)
	c.QueryRow(ctx, "SELECT count(*) FROM "+sig).Scan(&rows)
	if slots != 0 || pubs != 0 || rows != 0 {
		t.Errorf("left behind: %d slots, %d publications, %d signal rows", slots, pubs, rows)
	}
}

// verify certifies a recorded bundle, and fails unless a local split of
// three parts and a split verification of three parts merged give the
// same answer (verdict, first failure, cut).
func verify(t *testing.T, bundle []byte) *certify.Result {
	t.Helper()
	res, err := certify.Verify(bytes.NewReader(bundle), certify.Options{})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	local, err := certify.Verify(bytes.NewReader(bundle), certify.Options{Parts: 3, Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("verify in parts: %v", err)
	}
	var parts []*certify.Part
	var files [][3]io.Reader
	for i := range 3 {
		var bufs [3]bytes.Buffer
		p, err := certify.VerifyPart(bytes.NewReader(bundle), certify.Options{}, certify.Split{Index: i, Count: 3}, [3]io.Writer{&bufs[0], &bufs[1], &bufs[2]})
		if err != nil {
			t.Fatalf("verify part %d: %v", i, err)
		}
		parts = append(parts, p)
		files = append(files, [3]io.Reader{&bufs[0], &bufs[1], &bufs[2]})
	}
	merged, err := certify.MergeParts(parts, files)
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	for name, r := range map[string]*certify.Result{"a local split": local, "a split verification": merged} {
		a, _ := json.Marshal(answer(res))
		b, _ := json.Marshal(answer(r))
		if string(a) != string(b) {
			t.Fatalf("%s of a recorded run answers otherwise:\n%s\n%s", name, b, a)
		}
	}
	return res
}

// answer is what a split must give as the whole verification does.
func answer(r *certify.Result) any {
	var cut certify.Cut
	if r.Cut != nil {
		cut = *r.Cut
	}
	return struct {
		V certify.Verdict
		F *certify.Failure
		C certify.Cut
		A []string
	}{r.Verdict, r.Failure, cut, r.Assumes}
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
	raced, txns := int64(0), int64(0)
	for _, tc := range []struct {
		seed  int64
		chunk int
	}{{1, 7}, {2, 16}, {3, 50}, {4, 1}} {
		t.Run(fmt.Sprintf("seed%d-chunk%d", tc.seed, tc.chunk), func(t *testing.T) {
			tab, sig := freshTable(t, c)
			st, bundle, _ := record(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: tc.chunk, Populate: 60,
				Workload: Workload{Rate: 1000, Seed: tc.seed}, WindowHold: 5 * time.Millisecond})
			res := verify(t, bundle)
			if res.Verdict != certify.Accept {
				t.Fatalf("verdict %v: %v\nstats %+v", res.Verdict, res.Failure, st)
			}
			txns += st.Txns
			if st.Chunks < 2 || st.Rows == 0 {
				t.Errorf("the run did too little: %+v", st)
			}
			raced += st.Discarded
			noLeftovers(t, c, sig)
		})
	}
	if txns == 0 {
		t.Errorf("the workload committed nothing while the runs recorded")
	}
	if raced == 0 {
		t.Errorf("no window event ever discarded a buffered row: the race the capture guards against never happened")
	}
}

// A fault is caught exactly when it bites: a run in which the faulty capture
// acted otherwise than the correct one is rejected, naming the clause; a run
// in which it did not (the race never happened) is accepted.
// Reference: mutations no-discard, copy-dropped, late-start and the window
// edges (Def. 6.2, S-OBS, §2.3 half-open windows).
func TestFaultsRejectedWhenTheyBite(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	for _, tc := range []struct {
		fault, clause string
	}{
		{"no-discard", "the prefix is the window-discard emission"},
		{"copy-dropped", "the prefix is the window-discard emission"},
		{"late-start", "consumption starts at or before every low edge"},
		{"low-edge-off-by-one", "the prefix is the window-discard emission"},
		{"high-edge-off-by-one", "the prefix is the window-discard emission"},
		{"early-release", "the prefix is the window-discard emission"},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			bit := false
			for seed := int64(1); seed <= faultTries && !bit; seed++ {
				tab, sig := freshTable(t, c)
				st, bundle, err := recordErr(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 5, Populate: 30, Fault: tc.fault,
					Workload: Workload{Rate: -1, Seed: seed, Clients: 2, MaxRows: 2}, WindowHold: 15 * time.Millisecond})
				if err != nil && (oracleErr(err) == "" || st.Diverged == 0) {
					t.Fatalf("seed %d: %v (the fault acted %d times)", seed, err, st.Diverged)
				}
				res := verify(t, bundle)
				if st.Diverged == 0 {
					if res.Verdict != certify.Accept {
						t.Fatalf("seed %d: the fault never acted, yet %v: %v", seed, res.Verdict, res.Failure)
					}
					continue
				}
				bit = true
				if res.Verdict != certify.Reject || !strings.HasPrefix(res.Failure.Clause, tc.clause) {
					t.Fatalf("seed %d: the fault acted %d times; want Reject naming %q, got %v: %v", seed, st.Diverged, tc.clause, res.Verdict, res.Failure)
				}
				noLeftovers(t, c, sig)
			}
			if !bit {
				t.Errorf("in %d seeded runs the fault never acted: the race was not provoked", faultTries)
			}
		})
	}
}

// Ctrl-C in the middle of a run leaves nothing behind: the temporary slot
// goes with its connection, the publication and the signal rows are removed.
func TestCancelLeavesNothing(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	tab, sig := freshTable(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	// cancel once the second chunk's window is open: a slot, a publication
	// and signal rows exist then
	go func() {
		for ctx.Err() == nil {
			var n int
			c2, err := pgx.Connect(ctx, url)
			if err == nil {
				c2.QueryRow(ctx, "SELECT count(*) FROM "+sig).Scan(&n)
				c2.Close(context.Background())
			}
			if n >= 3 {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	var bundle bytes.Buffer
	_, err := Record(ctx, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 2, Populate: 200, Bundle: &bundle,
		Workload: Workload{Rate: 200, Seed: 1}, WindowHold: 20 * time.Millisecond})
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want the run cancelled, got %v", err)
	}
	if bundle.Len() != 0 {
		t.Errorf("a cancelled run wrote %d bytes of bundle", bundle.Len())
	}
	noLeftovers(t, c, sig)
}

// Bad input gets one line and the right class: usage (exit 2) for what the
// user must fix in the command, I/O (exit 3) for the server.
func TestBadInput(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	ctx := context.Background()
	tab, sig := freshTable(t, c)
	c.Exec(ctx, "CREATE TABLE "+tab+" (a int, b int)")
	typed, _ := freshTable(t, c)
	c.Exec(ctx, "CREATE TABLE "+typed+" (id int PRIMARY KEY, at point)")
	ok, _ := freshTable(t, c)
	c.Exec(ctx, "CREATE TABLE "+ok+" (id int PRIMARY KEY)")
	c.Exec(ctx, "SELECT pg_create_logical_replication_slot('cutcheck_busy_test', 'pgoutput')")
	t.Cleanup(func() { c.Exec(ctx, "SELECT pg_drop_replication_slot('cutcheck_busy_test')") })
	for _, tc := range []struct {
		name  string
		opt   Options
		usage bool
		want  string
	}{
		{"no primary key", Options{URL: url, Table: tab}, true, "has no primary key"},
		{"no such table", Options{URL: url, Table: "no_such_table_x"}, true, "does not exist"},
		{"column type", Options{URL: url, Table: typed}, true, "column at has type point, which record cannot render"},
		{"slot in use", Options{URL: url, Table: ok, Slot: "cutcheck_busy_test"}, true, `replication slot "cutcheck_busy_test" is in use`},
		{"bad fault", Options{URL: url, Table: ok, Fault: "nope"}, true, "unknown fault"},
		{"bad url", Options{URL: "postgres://x:y:z", Table: ok}, true, "--db"},
		{"unreachable", Options{URL: "postgres://nobody@127.0.0.1:1/db?connect_timeout=2", Table: ok}, false, "cannot reach the server"},
		{"no such user", Options{URL: withParam(url, "user", "nobody_here"), Table: ok}, false, "nobody_here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opt.SignalTable = sig
			_, err := Record(ctx, tc.opt)
			var re *Error
			if !errors.As(err, &re) {
				t.Fatalf("want a record.Error, got %T %v", err, err)
			}
			if re.Usage != tc.usage || !strings.Contains(re.Msg, tc.want) || strings.Contains(re.Msg, "\n") {
				t.Fatalf("got usage=%v %q; want usage=%v and %q on one line", re.Usage, re.Msg, tc.usage, tc.want)
			}
		})
	}
	noLeftovers(t, c, sig)
}

// Only classic traces are replayed: a step of another protocol is refused,
// not replayed as something it is not.
func TestReadScheduleRefusesOtherProtocols(t *testing.T) {
	trace := `{"property":"p","steps":[{"action":"","view":{"source":[{"key":0,"value":0}]}},
		{"action":"chunk 1 backfills (1, 2] and emits merged {} at 2","view":{"source":[{"key":0,"value":0}]}}]}`
	_, err := ReadSchedule(strings.NewReader(trace))
	if err == nil || !strings.Contains(err.Error(), "is not a step of the classic capture") {
		t.Fatalf("got %v", err)
	}
	if _, err := ReadSchedule(strings.NewReader("{")); err == nil || !strings.Contains(err.Error(), "not a trace written by check --trace-json") {
		t.Fatalf("got %v", err)
	}
}

// lost-watermark: the signalling table is left out of the publication, the
// windows never open or close, and the capture would wait forever; record
// says so (exit 4 on the command line) and leaves nothing behind.
// Reference: mutation lost-watermark (§7.3 W3/W4, a deadlock in the model).
func TestLostWatermarkIsStuck(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	tab, sig := freshTable(t, c)
	var bundle bytes.Buffer
	_, err := Record(context.Background(), Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 5, Populate: 20,
		Fault: "lost-watermark", Stall: 500 * time.Millisecond, Workload: Workload{Rate: 100, Seed: 1}, Bundle: &bundle})
	var re *Error
	if !errors.As(err, &re) || !re.Stuck || !strings.Contains(re.Msg, "the capture would wait forever") {
		t.Fatalf("want the capture stuck, got %v", err)
	}
	if bundle.Len() != 0 {
		t.Errorf("a stuck run wrote a bundle")
	}
	noLeftovers(t, c, sig)
}

// The events are Debezium's PostgreSQL envelope and, ordered as written,
// their source.sequence never goes back (lsn alone may: PostgreSQL
// interleaves transactions in the WAL and delivers them by commit); every
// log position of the table is one c/u/d event and every survivor one r.
func TestEventsAreDebeziumEnvelopes(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	tab, sig := freshTable(t, c)
	st, _, events := record(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 10, Populate: 50,
		Workload: Workload{Rate: 500, Seed: 3}, WindowHold: 5 * time.Millisecond})
	var prev [2]uint64
	ops := map[string]int64{}
	for n, line := range bytes.Split(bytes.TrimSpace(events), []byte("\n")) {
		var e struct {
			Before, After json.RawMessage
			Op            string `json:"op"`
			Source        struct {
				Connector, Snapshot, DB, Schema, Table, Sequence string
				TxID                                             *uint64 `json:"txId"`
				LSN                                              *uint64 `json:"lsn"`
			} `json:"source"`
		}
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		src := e.Source
		if src.Connector != "postgresql" || src.DB == "" || src.Schema != "public" || src.TxID == nil || src.LSN == nil {
			t.Fatalf("line %d: not a PostgreSQL source block: %s", n+1, line)
		}
		var seq []*string
		if err := json.Unmarshal([]byte(src.Sequence), &seq); err != nil || len(seq) != 2 || seq[1] == nil {
			t.Fatalf("line %d: sequence %q", n+1, src.Sequence)
		}
		var cur [2]uint64
		for i, s := range seq {
			if s != nil {
				cur[i], _ = strconv.ParseUint(*s, 10, 64)
			}
		}
		if cur[0] < prev[0] || cur[0] == prev[0] && cur[1] < prev[1] {
			t.Fatalf("line %d: sequence %v after %v", n+1, cur, prev)
		}
		prev = cur
		if src.Table == tab {
			ops[e.Op]++
			if (e.Op == "r") != (src.Snapshot == "incremental") {
				t.Fatalf("line %d: op %s with snapshot %q", n+1, e.Op, src.Snapshot)
			}
		}
	}
	if ops["r"] != st.Survivors || ops["c"]+ops["u"]+ops["d"] == 0 {
		t.Errorf("events by op %v; survivors %d", ops, st.Survivors)
	}
}
