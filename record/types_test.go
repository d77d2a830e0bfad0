package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/cutcheck/cutcheck/certify"
)

// userTypes creates an enum, a domain and a composite type of this test
// (dropped at its end) and returns their names.
func userTypes(t *testing.T, c *pgx.Conn) (enum, domain, comp string) {
	t.Helper()
	tableSeq++
	p := fmt.Sprintf("rt_%d_%d", os.Getpid(), tableSeq)
	enum, domain, comp = p+"_mood", p+"_posint", p+"_pair"
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TYPE " + enum + " AS ENUM ('sad', 'ok', 'happy')",
		"CREATE DOMAIN " + domain + " AS integer CHECK (VALUE > 0)",
		"CREATE TYPE " + comp + " AS (a integer, b text, c numeric(4,1))",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() { c.Exec(context.Background(), "DROP TYPE IF EXISTS "+enum+", "+domain+", "+comp+" CASCADE") })
	return enum, domain, comp
}

// allTypes are columns of every type the renderer knows.
func allTypes(enum, domain, comp string) []string {
	return []string{"b bool", "i2 int2", "i4 int4", "i8 int8", "f4 real", "f8 double precision", "n numeric", "n52 numeric(5,2)",
		"m money", "c8 char(8)", "vc varchar(10)", "t text", "by bytea", "d date", "tm time", "tm3 time(3)", "ttz timetz",
		"ts timestamp", "ts3 timestamp(3)", "tstz timestamptz", "tstz3 timestamptz(3)", "iv interval", "u uuid", "j json", "jb jsonb",
		"ip inet", "cd cidr", "mac macaddr", "b1 bit(1)", "b5 bit(5)", "vb varbit", "ia int4[]", "ta text[]", "na numeric(6,2)[]",
		"tsa timestamptz[]", "e " + enum, "ea " + enum + "[]", "dom " + domain, "r int4range", "tr tstzrange", "comp " + comp, "x xml"}
}

// fill inserts n rows of random values (keys drawn as the workload draws
// new ones; an integer key counts from 1) and returns how many it wrote.
func fill(t *testing.T, c *pgx.Conn, tab *table, n int, rng *rand.Rand) int {
	t.Helper()
	st := prepareStatements(tab)
	ctx := context.Background()
	for i := 1; i <= n; i++ {
		var args []any
		for _, ki := range tab.key {
			if len(tab.key) == 1 && tab.cols[ki].codec.kind == kInt {
				args = append(args, fmt.Sprint(i))
				continue
			}
			args = append(args, randomKeyText(rng, tab.cols[ki].codec))
		}
		for _, i := range st.vals {
			args = append(args, randomValue(rng, tab.cols[i]))
		}
		// a value a domain's check refuses is no row
		if _, err := c.Exec(ctx, st.insert, args...); err != nil && !strings.Contains(err.Error(), "SQLSTATE 23") {
			t.Fatalf("filling %s: %v", tab.qname, err)
		}
	}
	var rows int
	c.QueryRow(ctx, "SELECT count(*) FROM "+tab.qname).Scan(&rows)
	return rows
}

// A value read by the chunk select and the same value decoded from
// pgoutput render identically, for every type: random rows (extremes,
// NULLs, values over the TOAST threshold) are inserted after the slot
// exists, and each row's image from the stream equals its image from the
// select. Breaking it: selecting each column ::text (booleans become
// "true", char(n) loses its padding, inet gains a /32).
func TestBothPathsRenderAlike(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	enum, domain, comp := userTypes(t, c)
	name, _ := freshTable(t, c)
	if _, err := c.Exec(ctx, "CREATE TABLE "+name+" (id int PRIMARY KEY, "+strings.Join(allTypes(enum, domain, comp), ", ")+")"); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	s := &session{cfg: cfg, slot: fmt.Sprintf("cutcheck_paths_%d", os.Getpid()), run: "paths"}
	defer s.close()
	if s.sql, err = connect(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if s.tab, err = inspect(ctx, s.sql, name, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.sql.Exec(ctx, "CREATE PUBLICATION "+s.slot+" FOR TABLE "+s.tab.qname); err != nil {
		t.Fatal(err)
	}
	s.pubMade = true
	if err := s.startReplication(ctx); err != nil {
		t.Fatal(err)
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	n := fill(t, c, s.tab, 400, rand.New(rand.NewPCG(uint64(seed), 0)))

	stream := map[string]string{}
	for len(stream) < n {
		msg, err := s.repl.ReceiveMessage(ctx)
		if err != nil {
			t.Fatalf("after %d rows: %v", len(stream), err)
		}
		cd, ok := msg.(*pgproto3.CopyData)
		if !ok || len(cd.Data) == 0 || cd.Data[0] != pglogrepl.XLogDataByteID {
			continue
		}
		x, _ := pglogrepl.ParseXLogData(cd.Data[1:])
		m, err := pglogrepl.Parse(x.WALData)
		if err != nil {
			t.Fatal(err)
		}
		if ins, ok := m.(*pglogrepl.InsertMessage); ok {
			vals, toasted := tuple(ins.Tuple)
			if len(toasted) > 0 {
				t.Fatalf("an insert with unchanged TOASTed columns %v", toasted)
			}
			k, _ := s.tab.keyOf(vals)
			img, err := s.tab.image(nil, vals)
			if err != nil {
				t.Fatalf("the stream's row %s: %v", k.json, err)
			}
			stream[k.json] = string(img)
		}
	}
	rows, err := s.sql.Query(ctx, "SELECT "+s.tab.selectList()+" FROM "+s.tab.qname, textFormat)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close() // before the session's close, which drops the publication
	read := 0
	for rows.Next() {
		vals := rows.RawValues()
		k, _ := s.tab.keyOf(vals)
		img, err := s.tab.image(nil, vals)
		if err != nil {
			t.Fatalf("the select's row %s: %v", k.json, err)
		}
		if stream[k.json] != string(img) {
			t.Fatalf("key %s:\nthe stream %s\nthe select %s", k.json, stream[k.json], img)
		}
		read++
	}
	if rows.Err() != nil || read != n {
		t.Fatalf("read %d of %d rows: %v", read, n, rows.Err())
	}
}

// recordBoth records a run and checks it both ways: the bundle is
// accepted, and certify --from debezium on its events reaches the same cut
// (or, where a window delivered no row, certifies less and never
// otherwise). It returns the bundle.
func recordBoth(t *testing.T, opt Options, key []string) []byte {
	t.Helper()
	if key == nil {
		key = []string{"id"}
	}
	st, bundle, events, notes := recordAll(t, opt)
	want := verify(t, bundle)
	if want.Verdict != certify.Accept {
		t.Fatalf("the bundle: %s (stats %+v)", outcome(want), st)
	}
	var b bytes.Buffer
	ns, f, err := certify.FromDebezium(bytes.NewReader(events), &b, certify.DebeziumOptions{Table: opt.Table, SignalTable: opt.SignalTable, Key: key, Notifications: bytes.NewReader(notes)})
	if err != nil {
		t.Fatalf("convert: %v", err)
	}
	got := &certify.Result{Verdict: certify.Unsupported, Failure: f}
	if f == nil {
		got = verify(t, b.Bytes())
	}
	if hollowWindow(t, opt.Table, opt.SignalTable, events) {
		// as in TestDebeziumRoundTripClean: the converter cannot place the
		// chunk ends, says so and certifies less (or nothing)
		if got.Verdict == certify.Reject || got.Verdict == certify.Accept && got.Cut.Scope == want.Cut.Scope {
			t.Fatalf("a window delivered no row; want fewer keys certified, got %s", outcome(got))
		}
		return bundle
	}
	if outcome(got) != outcome(want) {
		t.Fatalf("the bundle: %s\nthe events: %s %q", outcome(want), outcome(got), ns)
	}
	return bundle
}

// values returns every value the bundle's reads and log events hold for a
// column, as JSON.
func values(t *testing.T, bundle []byte, col string) []string {
	t.Helper()
	var out []string
	for _, line := range bytes.Split(bytes.TrimSpace(bundle), []byte("\n"))[1:] {
		var r struct {
			Out *json.RawMessage           `json:"out"`
			V   map[string]json.RawMessage `json:"v"`
		}
		if json.Unmarshal(line, &r) != nil || r.V == nil || r.Out != nil {
			continue
		}
		out = append(out, string(r.V[col]))
	}
	return out
}

// A boolean true read by a chunk is true: on a table of flags, the
// bundle's reads hold exactly the table's trues and falses, and both
// certify paths accept the same cut.
func TestBooleanTable(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	tab, sig := freshTable(t, c)
	c.Exec(context.Background(), "CREATE TABLE "+tab+" (id int PRIMARY KEY, flag boolean NOT NULL)")
	c.Exec(context.Background(), "INSERT INTO "+tab+" SELECT g, g % 7 <> 0 FROM generate_series(1, 2000) g")
	bundle := recordBoth(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 256}, nil)
	count := map[string]int{}
	for _, v := range values(t, bundle, "flag") {
		count[v]++
	}
	if count["true"] != 2000-285 || count["false"] != 285 || len(count) != 2 {
		t.Fatalf("the bundle's flags: %v; the table has 1715 true, 285 false", count)
	}
}

// char(n) is padded as stored on both paths: every value of a character(84)
// column (pgbench_accounts.filler) and of a char(3) one, read or streamed
// under the workload, has its full width, and both paths accept.
func TestCharTable(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	tab, sig := freshTable(t, c)
	c.Exec(context.Background(), "CREATE TABLE "+tab+" (id int PRIMARY KEY, filler character(84), s char(3) NOT NULL)")
	c.Exec(context.Background(), "INSERT INTO "+tab+" SELECT g, 'x', 'a' FROM generate_series(1, 200) g")
	bundle := recordBoth(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 16,
		Workload: Workload{Rate: 500, Seed: 5}, WindowHold: 5 * time.Millisecond}, nil)
	streamed := 0
	for col, width := range map[string]int{"filler": 84, "s": 3} {
		for _, v := range values(t, bundle, col) {
			var s *string
			if err := json.Unmarshal([]byte(v), &s); err != nil {
				t.Fatalf("%s: %s", col, v)
			}
			if s != nil && len([]rune(*s)) != width {
				t.Fatalf("column %s holds %q, not %d characters", col, *s, width)
			}
			if s != nil && strings.TrimRight(*s, " ") != "x" && strings.TrimRight(*s, " ") != "a" {
				streamed++
			}
		}
	}
	if streamed == 0 {
		t.Errorf("no value the workload wrote is in the bundle")
	}
}

// NaN, ±Infinity and -0 survive: the JSON converter's strings for the
// non-finite, -0 as a number, on both paths.
func TestFloatSpecials(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	tab, sig := freshTable(t, c)
	c.Exec(context.Background(), "CREATE TABLE "+tab+" (id int PRIMARY KEY, f double precision, r real)")
	c.Exec(context.Background(), "INSERT INTO "+tab+` VALUES (1, 'NaN', 'NaN'), (2, 'Infinity', '-Infinity'), (3, '-0', '-0'),
		(4, 1.7976931348623157e308, 1e-45), (5, 0.1, 0.1), (6, NULL, NULL)`)
	bundle := recordBoth(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 2}, nil)
	got := strings.Join(values(t, bundle, "f"), " ") + " | " + strings.Join(values(t, bundle, "r"), " ")
	want := `"NaN" "Infinity" -0 1.7976931348623157e+308 0.1 null | "NaN" "-Infinity" -0 1e-45 0.1 null`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// icuCollation is a collation whose order differs from byte order.
func icuCollation(t *testing.T, c *pgx.Conn) string {
	var name string
	if err := c.QueryRow(context.Background(), "SELECT collname FROM pg_collation WHERE collname IN ('en-x-icu', 'en_US.utf8', 'en_US') ORDER BY collname LIMIT 1").Scan(&name); err != nil {
		t.Skip("no non-C collation on this server")
	}
	var differs bool
	c.QueryRow(context.Background(), `SELECT 'B' COLLATE "`+name+`" > 'a' COLLATE "`+name+`"`).Scan(&differs)
	if !differs {
		t.Skipf("collation %s orders as bytes", name)
	}
	return name
}

// A text key under a collation that orders otherwise than bytes is chunked
// COLLATE "C": the chunk domains are certify's byte order, and under the
// workload both paths accept the same cut. Breaking it: chunking in the
// column's collation reads keys outside their chunk's domain (rejected).
func TestTextKeyUnderNonCCollation(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	coll := icuCollation(t, c)
	tab, sig := freshTable(t, c)
	c.Exec(context.Background(), "CREATE TABLE "+tab+` (id text COLLATE "`+coll+`" PRIMARY KEY, v integer)`)
	c.Exec(context.Background(), "INSERT INTO "+tab+` SELECT k || g, g FROM unnest(ARRAY['a', 'B', 'ä', 'Z', '_x', 'A', 'é', 'z']) k, generate_series(1, 6) g`)
	for seed := int64(1); seed <= 3; seed++ {
		recordBoth(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 5,
			Workload: Workload{Rate: 500, Seed: seed}, WindowHold: 5 * time.Millisecond}, nil)
	}
}

// A composite key chunks by row comparison in the key's column order, and
// the bundle's keys are certify.EncodeKey's: both paths accept the same cut.
func TestCompositeKey(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	tab, sig := freshTable(t, c)
	c.Exec(context.Background(), "CREATE TABLE "+tab+" (a int, b text, d date, v text, PRIMARY KEY (b, a, d))")
	c.Exec(context.Background(), "INSERT INTO "+tab+" SELECT g % 5 - 2, k, date '2024-01-01' + g % 3, 'v' || g FROM unnest(ARRAY['a', 'B', 'ä', '']) k, generate_series(1, 12) g")
	for seed := int64(1); seed <= 2; seed++ {
		recordBoth(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 7,
			Workload: Workload{Rate: 500, Seed: seed}, WindowHold: 5 * time.Millisecond}, []string{"b", "a", "d"})
	}
}

// Keys of each orderable type are accepted on the bundle; where Debezium's
// rendering orders as the type does (uuid, date, timestamp, varchar),
// certify --from debezium reaches the same cut.
func TestKeyTypes(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	for _, typ := range []string{"uuid", "date", "timestamp", "timestamp(3)", "time", "varchar(12)", "smallint"} {
		t.Run(typ, func(t *testing.T) {
			tab, sig := freshTable(t, c)
			c.Exec(context.Background(), "CREATE TABLE "+tab+" (id "+typ+" PRIMARY KEY, v integer)")
			ti, err := inspect(context.Background(), c, tab, nil)
			if err != nil {
				t.Fatal(err)
			}
			fill(t, c, ti, 60, rand.New(rand.NewPCG(7, 0)))
			recordBoth(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 6,
				Workload: Workload{Rate: 500, Seed: 3}, WindowHold: 5 * time.Millisecond}, nil)
		})
	}
}

// numeric and timestamptz keys: the bundle orders them by an encoding of
// its own and is accepted; Debezium renders them (Decimal bytes, an ISO
// string of varying width) in an order that is not theirs, and certify
// --from debezium says it cannot certify (Unsupported), never Accept.
func TestKeysDebeziumCannotOrder(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	for _, typ := range []string{"numeric", "numeric(8,2)", "timestamptz"} {
		t.Run(typ, func(t *testing.T) {
			tab, sig := freshTable(t, c)
			c.Exec(context.Background(), "CREATE TABLE "+tab+" (id "+typ+" PRIMARY KEY, v integer)")
			ti, err := inspect(context.Background(), c, tab, nil)
			if err != nil {
				t.Fatal(err)
			}
			fill(t, c, ti, 60, rand.New(rand.NewPCG(8, 0)))
			_, bundle, events, notes := recordAll(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 6,
				Workload: Workload{Rate: 500, Seed: 3}, WindowHold: 5 * time.Millisecond})
			want := verify(t, bundle)
			if want.Verdict != certify.Accept {
				t.Fatalf("the bundle: %s", outcome(want))
			}
			got, ns := fromDebezium(t, tab, sig, events, notes)
			if got.Verdict != certify.Unsupported {
				t.Fatalf("the events: %s %q; want Unsupported", outcome(got), ns)
			}
			t.Logf("certify --from debezium: %s: %s", outcome(got), got.Failure.Detail)
		})
	}
}

// Bad tables are refused up front, in one line naming what to change.
func TestBadTables(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	ctx := context.Background()
	mk := func(ddl string) string {
		tab, _ := freshTable(t, c)
		if _, err := c.Exec(ctx, fmt.Sprintf(ddl, tab)); err != nil {
			t.Fatal(err)
		}
		return tab
	}
	point := mk("CREATE TABLE %s (id int PRIMARY KEY, p point)")
	charKey := mk("CREATE TABLE %s (id char(4) PRIMARY KEY)")
	boolKey := mk("CREATE TABLE %s (id bool PRIMARY KEY)")
	unique := mk("CREATE TABLE %s (a int, b int NOT NULL UNIQUE, c int UNIQUE, d int NOT NULL)")
	_, sig := freshTable(t, c)
	for _, tc := range []struct {
		name, table string
		key         []string
		want        string
	}{
		{"type", point, nil, "column p has type point, which record cannot render"},
		{"char key", charKey, nil, "key column id has type character(4), which record cannot order"},
		{"bool key", boolKey, nil, "key column id has type boolean, which record cannot order"},
		{"no key", unique, nil, "has no primary key"},
		{"nullable key", unique, []string{"c"}, "key column c may be null"},
		{"not unique", unique, []string{"d"}, "is not the columns of a unique index"},
		{"no column", unique, []string{"zz"}, "is not the columns of a unique index"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Record(ctx, Options{URL: url, Table: tc.table, SignalTable: sig, Key: tc.key})
			var re *Error
			if !errors.As(err, &re) || !re.Usage || !strings.Contains(re.Msg, tc.want) || strings.Contains(re.Msg, "\n") {
				t.Fatalf("got %v; want a usage error with %q", err, tc.want)
			}
		})
	}
	// --key names a unique not-null key: the run is accepted
	c.Exec(ctx, "INSERT INTO "+unique+" SELECT g, g, g, g FROM generate_series(1, 30) g")
	recordBoth(t, Options{URL: url, Table: unique, SignalTable: sig, Key: []string{"b"}, ChunkSize: 7,
		Workload: Workload{Rate: 300, Seed: 2}}, []string{"b"})
	noLeftovers(t, c, sig)
}
