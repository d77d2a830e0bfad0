package record

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cutcheck/cutcheck/certify"
)

// recordErr is record that returns the run's error instead of failing.
func recordErr(t *testing.T, opt Options) (Stats, []byte, error) {
	t.Helper()
	var bundle, events bytes.Buffer
	opt.Bundle, opt.Events = &bundle, &events
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	st, err := Record(ctx, opt)
	return st, bundle.Bytes(), err
}

func oracleErr(err error) string {
	var re *Error
	if errors.As(err, &re) && re.Oracle {
		return re.Msg
	}
	return ""
}

// updateFirstKey is a window write: inside chunk i's window (chunks of
// five keys, 1..5 the first), the chunk's first key gets a value no read
// saw, and no later write touches it: the table ends with v = 1000+i
// there, which only the stream carries.
func updateFirstKey(url, tab string) func(context.Context, int) error {
	return func(ctx context.Context, i int) error {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, "UPDATE "+tab+" SET v = $2 WHERE id = $1", 5*(i-1)+1, 1000+i)
		return err
	}
}

// The table is the oracle, and each fault that acts on a backfill is
// caught by it, or is a case where the sink at rest cannot differ. The
// window write (updateFirstKey) lands at the low edge + 1 and the high
// edge - 1 of every chunk: the correct capture discards the read row
// (the race happened: Discarded > 0) and agrees with the table; no-discard,
// the edge faults and late-start emit the stale read after the event, so
// the sink holds v = 1 at key 1 where the table holds 1001; copy-dropped
// loses every survivor (key 10, first in the keys' byte order without a
// window write); early-release emits the buffer before the window's
// events, which then overwrite it: the sink at rest agrees, and only the
// order is wrong (certify rejects the prefix). lost-watermark never
// reaches the check (the capture is stuck, TestLostWatermarkIsStuck).
// Reference: §10 kill matrix; main paper Def. 6.2.
func TestOracleKillMatrix(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	for _, tc := range []struct{ fault, diff string }{
		{"", ""},
		{"no-discard", "at key 1: column v is 1001 in the table and 1 in the stream"},
		{"late-start", "at key 1: column v is 1001 in the table and 1 in the stream"},
		{"low-edge-off-by-one", "at key 1: column v is 1001 in the table and 1 in the stream"},
		{"high-edge-off-by-one", "at key 1: column v is 1001 in the table and 1 in the stream"},
		{"copy-dropped", `at key 10: the table holds {"id":10,"s":"row 10","v":2}, the stream has no row`},
		{"early-release", ""},
	} {
		t.Run("fault="+tc.fault, func(t *testing.T) {
			tab, sig := freshTable(t, c)
			st, bundle, err := recordErr(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 5, Populate: 40, Fault: tc.fault,
				inWindow: updateFirstKey(url, tab)})
			msg := oracleErr(err)
			if err != nil && msg == "" {
				t.Fatalf("record: %v", err)
			}
			if tc.diff == "" && msg != "" || tc.diff != "" && !strings.Contains(msg, tc.diff) {
				t.Fatalf("oracle: got %q, want %q", msg, tc.diff)
			}
			if st.Discarded == 0 && tc.fault != "early-release" || msg == "" && st.Checked != 40 {
				t.Errorf("the race never happened or the check compared too little: %+v", st)
			}
			res := verify(t, bundle)
			if (tc.fault == "") != (res.Verdict == certify.Accept) || (tc.fault == "") != (st.Diverged == 0) {
				t.Errorf("certify %v (%v), the fault acted %d times", res.Verdict, res.Failure, st.Diverged)
			}
			noLeftovers(t, c, sig)
		})
	}
}

// Outside writers keep writing while the check reads the table: each
// key's value is the stream's at some position between the markers, not
// necessarily at either one (an exact comparison at M1 or M2 fails here).
func TestOracleUnderOutsideWriter(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	tab, sig := freshTable(t, c)
	c.Exec(context.Background(), "CREATE TABLE "+tab+" (id bigint PRIMARY KEY, v integer, s text)")
	c.Exec(context.Background(), "INSERT INTO "+tab+" SELECT g, 0, 'x' FROM generate_series(1, 200) g")
	ctx, cancel := context.WithCancel(context.Background())
	// The writer is connected and writing before the run starts: a run
	// faster than a connection (as under the race detector) met no write.
	w, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	done, writing := make(chan int, 1), make(chan struct{})
	go func() {
		defer w.Close(context.Background())
		n := 0
		for ctx.Err() == nil {
			if _, err := w.Exec(ctx, "UPDATE "+tab+" SET v = v + 1 WHERE id = $1", 1+n%200); err != nil {
				break
			}
			if n++; n == 10 {
				close(writing)
			}
		}
		done <- n
	}()
	select {
	case <-writing:
	case n := <-done:
		t.Fatalf("the outside writer stopped after %d writes", n)
	}
	// Every run must pass the check; at least one must meet a write
	// between the check's markers (Bracketed), the race it is about. The
	// markers are milliseconds apart, and a loaded machine can leave the
	// writer idle that long: a few runs make it certain in practice.
	bracketed := int64(0)
	for run := 0; run < 5 && bracketed == 0; run++ {
		st, bundle, err := recordErr(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 20})
		if err != nil {
			t.Fatalf("record: %v", err)
		}
		if res := verify(t, bundle); res.Verdict != certify.Accept || st.Checked != 200 {
			t.Fatalf("run %d: %v (%v); checked %d keys", run+1, res.Verdict, res.Failure, st.Checked)
		}
		bracketed = st.Bracketed
	}
	cancel()
	if writes := <-done; writes < 100 || bracketed == 0 {
		t.Fatalf("no run met an outside write between the check's markers (%d outside writes)", writes)
	}
}

// A partitioned table's changes come under its own name
// (publish_via_partition_root): under a workload it is accepted and
// passes the oracle. Without the option, the partitions' changes were
// dropped and the run accepted all the same; now a relation the run did
// not expect stops it, naming it — here an inheritance child's insert.
func TestPartitionedAndInherited(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	ctx := context.Background()
	tab, sig := freshTable(t, c)
	for _, q := range []string{
		"CREATE TABLE " + tab + " (id bigint PRIMARY KEY, v integer, s text) PARTITION BY RANGE (id)",
		"CREATE TABLE " + tab + "_p1 PARTITION OF " + tab + " FOR VALUES FROM (MINVALUE) TO (20)",
		"CREATE TABLE " + tab + "_p2 PARTITION OF " + tab + " FOR VALUES FROM (20) TO (40)",
		"CREATE TABLE " + tab + "_p3 PARTITION OF " + tab + " FOR VALUES FROM (40) TO (MAXVALUE)",
		"INSERT INTO " + tab + " SELECT g, g % 4, 'row ' || g FROM generate_series(1, 60) g",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	st, bundle, err := recordErr(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 7,
		Workload: Workload{Rate: 1000, Seed: 5}, WindowHold: 5 * time.Millisecond})
	if err != nil {
		t.Fatalf("record: %v", err)
	}
	if res := verify(t, bundle); res.Verdict != certify.Accept || st.Txns == 0 || st.Positions <= int64(2*st.Chunks+1) {
		t.Fatalf("%v (%v); %+v: the partitions' changes must reach the log", res.Verdict, res.Failure, st)
	}
	noLeftovers(t, c, sig)

	parent, sig2 := freshTable(t, c)
	c.Exec(ctx, "CREATE TABLE "+parent+" (id bigint PRIMARY KEY, v integer, s text)")
	c.Exec(ctx, "CREATE TABLE "+parent+"_child () INHERITS ("+parent+")")
	t.Cleanup(func() { c.Exec(context.Background(), "DROP TABLE IF EXISTS "+parent+"_child") })
	c.Exec(ctx, "INSERT INTO "+parent+" SELECT g, 0, 'p' FROM generate_series(1, 20) g")
	_, _, err = recordErr(t, Options{URL: url, Table: parent, SignalTable: sig2, ChunkSize: 5,
		inWindow: func(ctx context.Context, i int) error {
			_, err := c.Exec(ctx, "INSERT INTO "+parent+"_child VALUES (100 + $1, 0, 'c')", i)
			return err
		}})
	if err == nil || !strings.Contains(err.Error(), `changes of "public"."`+parent+`_child", which record did not expect`) {
		t.Fatalf("an inheritance child's change: got %v", err)
	}
	noLeftovers(t, c, sig2)
}

// bigText is a value the server stores out of line: 9,600 characters of
// hex that compress poorly.
const bigText = "(SELECT string_agg(md5(random()::text || g::text || x::text), '') FROM generate_series(1, 300) x)"

// An update that leaves a TOASTed column unchanged: filled from the old
// row under REPLICA IDENTITY FULL, or from the row's last known image (a
// chunk read that survived its window); otherwise the run stops naming
// the fix. The oracle compares the filled images with the table.
func TestToastedUnchangedColumn(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		identity string
		chunk    int   // the chunk whose window updates key
		key      int64 // chunks of four keys: 12 is read by chunk 3, 1 by chunk 1
		want     string
	}{
		{"full identity, a key not read yet", "FULL", 1, 12, ""},
		{"known image: a survivor of chunk 1", "DEFAULT", 2, 1, ""},
		{"no image: a key not read yet", "DEFAULT", 1, 12, "REPLICA IDENTITY FULL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab, sig := freshTable(t, c)
			c.Exec(ctx, "CREATE TABLE "+tab+" (id bigint PRIMARY KEY, v integer, big text)")
			c.Exec(ctx, "ALTER TABLE "+tab+" REPLICA IDENTITY "+tc.identity)
			if _, err := c.Exec(ctx, "INSERT INTO "+tab+" SELECT g, 0, "+bigText+" FROM generate_series(1, 14) g"); err != nil {
				t.Fatal(err)
			}
			st, bundle, err := recordErr(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 4,
				inWindow: func(ctx context.Context, i int) error {
					if i != tc.chunk {
						return nil
					}
					_, err := c.Exec(ctx, "UPDATE "+tab+" SET v = 7 WHERE id = $1", tc.key)
					return err
				}})
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), "column big unchanged in TOAST storage") || !strings.Contains(err.Error(), `ALTER TABLE "public"."`+tab+`" REPLICA IDENTITY FULL`) {
					t.Fatalf("got %v", err)
				}
				noLeftovers(t, c, sig)
				var sigLeft bool
				c.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", sig).Scan(&sigLeft)
				if sigLeft {
					t.Errorf("the failed run left the signalling table it created")
				}
				return
			}
			if err != nil {
				t.Fatalf("record: %v", err)
			}
			if res := verify(t, bundle); res.Verdict != certify.Accept || st.Checked != 14 {
				t.Fatalf("%v (%v) %+v", res.Verdict, res.Failure, st)
			}
			// the event carries the whole row: the value, not a placeholder
			if !bytes.Contains(bundle, []byte(fmt.Sprintf(`"k":%d,"v":{"big":"`, tc.key))) {
				t.Errorf("the update's image lacks its big column")
			}
			noLeftovers(t, c, sig)
		})
	}
}

// record writes nothing to the user's table without --workload: its rows,
// and their row versions (xmin), are the same before and after, while
// another table is written all along.
func TestReadOnlyByDefault(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	ctx := context.Background()
	tab, sig := freshTable(t, c)
	other, _ := freshTable(t, c)
	c.Exec(ctx, "CREATE TABLE "+tab+" (id bigint PRIMARY KEY, v integer, s text)")
	c.Exec(ctx, "INSERT INTO "+tab+" SELECT g, g % 7, 'r' || g FROM generate_series(1, 500) g")
	c.Exec(ctx, "CREATE TABLE "+other+" (id bigint PRIMARY KEY, v integer)")
	digest := func() string {
		var d string
		if err := c.QueryRow(ctx, "SELECT md5(string_agg(t::text || t.xmin::text, ',' ORDER BY id)) FROM "+tab+" t").Scan(&d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	before := digest()
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w, err := pgx.Connect(wctx, url)
		for n := 0; err == nil && wctx.Err() == nil; n++ {
			_, err = w.Exec(wctx, "INSERT INTO "+other+" VALUES ($1, 1) ON CONFLICT (id) DO UPDATE SET v = "+other+".v + 1", n%50)
		}
		if w != nil {
			w.Close(context.Background())
		}
	}()
	st, _, err := recordErr(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 64})
	cancel()
	<-done
	if err != nil {
		t.Fatalf("record: %v", err)
	}
	if after := digest(); after != before || st.Txns != 0 || st.Rows != 500 {
		t.Fatalf("the table changed (%s, then %s) or the run read otherwise: %+v", before, after, st)
	}
	var sigLeft bool
	c.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", sig).Scan(&sigLeft)
	if sigLeft {
		t.Errorf("the signalling table the run created is still there")
	}
}

// REPLICA IDENTITY NOTHING is refused before anything is created, and so
// are the other preconditions the server can check.
func TestRefusedBeforeAnythingIsCreated(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	ctx := context.Background()
	nothing, sig := freshTable(t, c)
	c.Exec(ctx, "CREATE TABLE "+nothing+" (id bigint PRIMARY KEY, v integer)")
	c.Exec(ctx, "ALTER TABLE "+nothing+" REPLICA IDENTITY NOTHING")
	plain, _ := freshTable(t, c)
	c.Exec(ctx, "CREATE TABLE "+plain+" (id bigint PRIMARY KEY, v integer)")
	role := fmt.Sprintf("rec_noperm_%d", os.Getpid())
	c.Exec(ctx, "DROP ROLE IF EXISTS "+role)
	if _, err := c.Exec(ctx, "CREATE ROLE "+role+" LOGIN REPLICATION"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Exec(context.Background(), "DROP OWNED BY "+role+"; DROP ROLE IF EXISTS "+role) })
	c.Exec(ctx, "GRANT SELECT ON "+plain+" TO "+role)
	c.Exec(ctx, "GRANT CREATE ON DATABASE "+mustDB(t, c)+" TO "+role)
	t.Cleanup(func() { c.Exec(context.Background(), "REVOKE CREATE ON DATABASE "+mustDB(t, c)+" FROM "+role) })
	c.Exec(ctx, "GRANT CREATE ON SCHEMA public TO "+role)
	t.Cleanup(func() { c.Exec(context.Background(), "REVOKE CREATE ON SCHEMA public FROM "+role) })
	for _, tc := range []struct {
		name string
		opt  Options
		want string
	}{
		{"replica identity nothing", Options{URL: url, Table: nothing}, "has REPLICA IDENTITY NOTHING"},
		{"no select privilege", Options{URL: withParam(url, "user", role), Table: nothing}, `lacks the SELECT privilege on table "public"."` + nothing},
		{"not the owner", Options{URL: withParam(url, "user", role), Table: plain}, `does not own table "public"."` + plain},
		{"signal table in a missing schema", Options{URL: url, Table: plain, SignalTable: "no_such_schema_x.sig"}, "schema no_such_schema_x does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.opt.SignalTable == "" {
				tc.opt.SignalTable = sig
			}
			_, err := Record(ctx, tc.opt)
			var re *Error
			if !errors.As(err, &re) || !re.Usage || !strings.Contains(re.Msg, tc.want) {
				t.Fatalf("got %v; want a usage error with %q", err, tc.want)
			}
			var made bool
			c.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL OR EXISTS (SELECT 1 FROM pg_publication WHERE pubname LIKE 'cutcheck\\_%')", sig).Scan(&made)
			if made {
				t.Errorf("the refused run created the signalling table or a publication")
			}
		})
	}
	// A role without REPLICATION: refused before --populate creates its table.
	c.Exec(ctx, "ALTER ROLE "+role+" NOREPLICATION")
	fresh, _ := freshTable(t, c)
	_, err := Record(ctx, Options{URL: withParam(url, "user", role), Table: fresh, Populate: 10, SignalTable: sig})
	var re *Error
	var made bool
	c.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", fresh).Scan(&made)
	if !errors.As(err, &re) || !re.Usage || !strings.Contains(re.Msg, "lacks the REPLICATION attribute") || made {
		t.Fatalf("no REPLICATION: got %v (the populated table made: %v)", err, made)
	}
}

func mustDB(t *testing.T, c *pgx.Conn) string {
	var d string
	if err := c.QueryRow(context.Background(), "SELECT quote_ident(current_database())").Scan(&d); err != nil {
		t.Fatal(err)
	}
	return d
}

// otherDB gives a connection to a second database of the test server.
func otherDB(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	admin := sqlConn(t, url)
	name := fmt.Sprintf("rec_other_%d", os.Getpid())
	admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = name
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// openXact begins, on c, a transaction with a transaction id, inside
// chunk 1's window (a transaction open when the slot is created holds the
// slot's creation instead, on any database); chunk 2's low watermark then
// has it in progress. It returns its backend pid and xid.
func openXact(c *pgx.Conn, pid, xid *string) func(context.Context, int) error {
	return func(ctx context.Context, i int) error {
		if i != 1 {
			return nil
		}
		if _, err := c.Exec(ctx, "BEGIN"); err != nil {
			return err
		}
		return c.QueryRow(ctx, "SELECT pg_backend_pid()::text, pg_current_xact_id()::text").Scan(pid, xid)
	}
}

// The wait after a low watermark is for the table's database only: a
// transaction open in another database all along does not hold the run
// (with --wait 1s it would end it).
func TestWaitIgnoresOtherDatabases(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	other := otherDB(t, url)
	tab, sig := freshTable(t, c)
	var pid, xid string
	var waited []Waiter
	_, _, err := recordErr(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 10, Populate: 50, Wait: time.Second,
		Waiting: func(w Waiter) { waited = append(waited, w) }, inWindow: openXact(other, &pid, &xid)})
	other.Exec(context.Background(), "ROLLBACK")
	if err != nil || xid == "" || len(waited) > 0 {
		t.Fatalf("a transaction (xid %s) in another database: %v, waited for %v", xid, err, waited)
	}
}

// A transaction of the table's database in progress at a low watermark is
// waited for and reported (its pid and xid) while the run waits; past
// --wait the run ends, naming it.
func TestWaitForTheTablesDatabase(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	ctx := context.Background()
	t.Run("waited for and reported", func(t *testing.T) {
		tab, sig := freshTable(t, c)
		x := sqlConn(t, url)
		var pid, xid string
		var waited []Waiter
		_, _, err := recordErr(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 10, Populate: 30, Wait: time.Minute,
			Waiting: func(w Waiter) {
				waited = append(waited, w)
				x.Exec(ctx, "COMMIT") // the transaction ends once reported
			}, inWindow: openXact(x, &pid, &xid)})
		if err != nil {
			t.Fatalf("record: %v", err)
		}
		if len(waited) != 1 || strconv.Itoa(waited[0].PID) != pid || waited[0].Xid != xid {
			t.Fatalf("waited for %+v; the transaction was pid %s xid %s", waited, pid, xid)
		}
	})
	t.Run("past --wait", func(t *testing.T) {
		tab, sig := freshTable(t, c)
		x := sqlConn(t, url)
		var pid, xid string
		_, _, err := recordErr(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 10, Populate: 30, Wait: time.Second,
			inWindow: openXact(x, &pid, &xid)})
		x.Exec(ctx, "ROLLBACK")
		var re *Error
		if !errors.As(err, &re) || !re.Stuck || !strings.Contains(re.Msg, "transaction "+xid+" (pid "+pid+", open for") || !strings.Contains(re.Msg, "did not end within --wait 1s") {
			t.Fatalf("got %v; want stuck naming xid %s and pid %s", err, xid, pid)
		}
		noLeftovers(t, c, sig)
	})
}

// A large transaction committed before chunk 1's low watermark streams
// for longer than --stall after the chunk's high watermark was written:
// WAL keeps arriving and the server has not sent past the watermark, so
// the capture is not stuck (counting from the high watermark's write, as
// it did, it was).
func TestLargeTransactionIsNotAStall(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 150,000 rows")
	}
	url := pgURL(t)
	c := sqlConn(t, url)
	tab, sig := freshTable(t, c)
	st, bundle, err := recordErr(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 20000, Populate: 100, Stall: time.Second,
		inWindow: func(ctx context.Context, i int) error {
			if i != 0 {
				return nil
			}
			_, err := c.Exec(ctx, "INSERT INTO "+tab+" SELECT g, 1, 'bulk' FROM generate_series(1000, 150999) g")
			return err
		}})
	if err != nil {
		t.Fatalf("record: %v", err)
	}
	if res := verify(t, bundle); res.Verdict != certify.Accept || st.Checked != 150100 || st.MaxLag < time.Second {
		t.Fatalf("%v (%v); %+v: the bulk insert must reach the consumer after the stall's time", res.Verdict, res.Failure, st)
	}
}
