package certify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// A run is written twice: as dbzRec writes it (one file, each window's rows
// after its close, every event its own position) and as Kafka delivers it
// (delivered below): a window's rows before its close (Debezium's order:
// EventDispatcher.dispatchDataChangeEvent runs closeWindow, which sends the
// rows, before it queues the close row's event), each topic in a file of
// its own and in a dump format of its own, a COPY's events at one position,
// and the records that change no row beside them. Both must give one cut.

func parseLine(t testing.TB, line string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func src(m map[string]any) map[string]any { s, _ := m["source"].(map[string]any); return s }

func marshal(v any) string { b, _ := json.Marshal(v); return string(b) }

// debeziumOrder moves each window's rows before its close row.
func debeziumOrder(t testing.TB, lines []string) []string {
	var out, rows []string
	close := -1 // index in out of the last close row, while its rows follow
	for _, l := range lines {
		m := parseLine(t, l)
		switch {
		case m["op"] == "r" && close >= 0:
			rows = append(rows, l)
			continue
		case close >= 0:
			out = append(out[:close], append(rows, out[close])...)
			close, rows = -1, nil
		}
		out = append(out, l)
		if after, _ := m["after"].(map[string]any); after != nil && after["type"] == "snapshot-window-close" {
			close = len(out) - 1
		}
	}
	if close >= 0 {
		out = append(out[:close], append(rows, out[close])...)
	}
	return out
}

// byTopic splits the events by table, as Debezium writes them to topics.
func byTopic(t testing.TB, lines []string) map[string][]string {
	topics := map[string][]string{}
	for _, l := range lines {
		s := src(parseLine(t, l))
		name := fmt.Sprint(s["table"])
		topics[name] = append(topics[name], l)
	}
	return topics
}

// atOnePosition gives events i..j of lines (one table's creates) the first
// one's source position, as a COPY's multi-insert has.
func atOnePosition(t testing.TB, lines []string, i, j int) {
	first := src(parseLine(t, lines[i]))
	for k := i + 1; k <= j; k++ {
		m := parseLine(t, lines[k])
		s := src(m)
		s["sequence"], s["lsn"], s["txId"] = first["sequence"], first["lsn"], first["txId"]
		lines[k] = marshal(m)
	}
}

// kcatJ writes records as kcat -J envelopes, a tombstone after each delete.
func kcatJ(t testing.TB, topic string, lines []string) string {
	var b strings.Builder
	off := 0
	rec := func(key string, payload any) {
		fmt.Fprintf(&b, "%s\n", marshal(map[string]any{"topic": topic, "partition": 0, "offset": off, "tstype": "create", "ts": 1764550009000, "broker": 1, "key": key, "payload": payload}))
		off++
	}
	for _, l := range lines {
		m := parseLine(t, l)
		rec(keyOf(m), l)
		if m["op"] == "d" {
			rec(keyOf(m), nil)
		}
	}
	return b.String()
}

func keyOf(m map[string]any) string {
	img, _ := m["after"].(map[string]any)
	if img == nil {
		img, _ = m["before"].(map[string]any)
	}
	return marshal(map[string]any{"id": img["id"]})
}

// printKey writes records as kafka-console-consumer --property
// print.key=true does (key⇥value, null for a tombstone); kcat -Z -K'\t'
// writes NULL.
func printKey(t testing.TB, lines []string, null string) string {
	var b strings.Builder
	for _, l := range lines {
		m := parseLine(t, l)
		fmt.Fprintf(&b, "%s\t%s\n", keyOf(m), l)
		if m["op"] == "d" {
			fmt.Fprintf(&b, "%s\t%s\n", keyOf(m), null)
		}
	}
	return b.String()
}

// signalInitialSnapshot is the signalling table's own rows as the
// connector's initial snapshot reads them: all at one position.
func signalInitialSnapshot(kinds ...string) []string {
	var out []string
	for i, k := range kinds {
		out = append(out, marshal(map[string]any{"before": nil, "after": row("id", fmt.Sprintf("old-%d", i), "type", "execute-snapshot", "data", nil), "op": "r",
			"source": map[string]any{"version": "2.7.0.Final", "connector": "postgresql", "name": "shop", "ts_ms": 1764550000000, "snapshot": k, "db": "shop",
				"sequence": `[null,"900"]`, "schema": "public", "table": "debezium_signal", "txId": 480, "lsn": 900, "xmin": nil}, "ts_ms": 1764550000100, "transaction": nil}))
	}
	return out
}

// twin is the same-named table of another schema, written in the same
// transactions' gaps (an LSN one past each event of the table's).
func twin(t testing.TB, lines []string) []string {
	var out []string
	for _, l := range lines {
		m := parseLine(t, l)
		s := src(m)
		if m["op"] == "r" || s["table"] != "customers" {
			continue
		}
		lsn := uint64(s["lsn"].(float64)) + 1
		var seq []string
		json.Unmarshal([]byte(s["sequence"].(string)), &seq)
		s["schema"], s["lsn"], s["sequence"] = "inventory", lsn, fmt.Sprintf(`["%s","%d"]`, seq[0], lsn)
		for _, img := range []string{"before", "after"} {
			if r, ok := m[img].(map[string]any); ok {
				r["name"] = fmt.Sprint(r["name"], "-inventory")
			}
		}
		out = append(out, marshal(m))
	}
	return out
}

func convertFiles(t *testing.T, opt DebeziumOptions, files ...string) ([]byte, Conversion, *Failure) {
	t.Helper()
	if len(files) == 1 {
		files = append(files, "") // named file1, as with several
	}
	out, conv, f, err := convertBoth(t, files, opt)
	if err != nil {
		t.Fatal(err)
	}
	return out, conv, f
}

// copyRun is the samples' run, then a COPY of three rows and a delete.
func copyRun(r *dbzRec) (run *dbzRec, copyAt int) {
	sampleRun(r, "bob2")
	copyAt = len(r.lines)
	for id := 5; id <= 7; id++ {
		r.create(cust(id, fmt.Sprint("copied", id)))
	}
	r.delete(cust(1, "alice2"))
	return r, copyAt
}

// Reference: issue "certify reads Debezium output as Debezium and Kafka
// tools deliver it" (done-when): the run in Debezium's order, in four files
// of four dump formats, a COPY at one position, a same-named table of
// another schema, the signalling table's initial snapshot, heartbeats,
// transaction metadata and tombstones, is the cut of the same run as the
// converter wrote it before: the same scope and digest.
func TestDebeziumAsDelivered(t *testing.T) {
	ev, _ := os.ReadFile("testdata/debezium-customers.notifications.jsonl")
	plain, copyAt := copyRun(pgRec())
	b, notes := convertOpt(t, plain.String(), DebeziumOptions{Notifications: bytes.NewReader(ev)})
	want := mustAccept(t, b)
	if want.Cut.Scope != "[−∞, +∞)" || len(notes) != 0 {
		t.Fatalf("the plain run: %s %q", want.Line(), notes)
	}

	lines := append([]string(nil), plain.lines...)
	atOnePosition(t, lines, copyAt, copyAt+2)
	topics := byTopic(t, debeziumOrder(t, lines))
	table := kcatJ(t, "shop.public.customers", topics["customers"])
	signals := printKey(t, append(signalInitialSnapshot("first", "true", "last"), topics["debezium_signal"]...), "null")
	other := printKey(t, twin(t, plain.lines), "NULL") // kcat -Z -K'\t'
	heartbeats := `{"ts_ms":1764550001000}` + "\n" + `{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"ts_ms"}],"optional":false,"name":"io.debezium.connector.common.Heartbeat"},"payload":{"ts_ms":1764550002000}}` + "\n"
	txns := `{"status":"BEGIN","id":"571:1200","ts_ms":1764550009000,"event_count":null,"data_collections":null}` + "\n" +
		`{"status":"END","id":"571:1200","ts_ms":1764550009000,"event_count":3,"data_collections":[{"data_collection":"public.customers","event_count":3}]}` + "\n"

	for name, tc := range map[string]struct {
		table string
		files []string
	}{
		"table topic first":               {"public.customers", []string{table, signals, other, heartbeats, txns}},
		"signal topic first":              {"public.customers", []string{txns, signals, heartbeats, other, table}},
		"one file per kind, concatenated": {"public.customers", []string{table + signals}},
	} {
		t.Run(name, func(t *testing.T) {
			b, conv, f := convertFiles(t, DebeziumOptions{Table: tc.table, Notifications: bytes.NewReader(ev)}, tc.files...)
			if f != nil {
				t.Fatalf("%s", f)
			}
			got := mustAccept(t, b)
			if got.Cut.Digest != want.Cut.Digest || got.Cut.Scope != want.Cut.Scope || got.Cut.Present != want.Cut.Present {
				t.Fatalf("delivered: %s\nplain:     %s", got.Line(), want.Line())
			}
			for _, n := range conv.Notes {
				if strings.Contains(n, "not certified") {
					t.Errorf("note %q", n)
				}
			}
		})
	}
	// The skipped records are counted.
	_, conv, _ := convertFiles(t, DebeziumOptions{Table: "public.customers", Notifications: bytes.NewReader(ev)}, table, signals, other, heartbeats, txns)
	for _, n := range []string{"2 heartbeats", "2 transaction metadata records", "3 rows of the signalling table's initial snapshot", "4 tombstones"} {
		if !strings.Contains(strings.Join(conv.Notes, "; "), n) {
			t.Errorf("notes %q, want %q", conv.Notes, n)
		}
	}
}

// Finding: a same-named table of another schema was merged in and the run
// Accepted with the wrong digest. By its bare name, or without --table, the
// table is Unsupported naming both; by its full name, the cut of the run
// without the other schema.
func TestDebeziumTwoSchemas(t *testing.T) {
	plain := sampleRun(pgRec(), "bob2")
	ev, _ := os.ReadFile("testdata/debezium-customers.notifications.jsonl")
	b, _ := convertOpt(t, plain.String(), DebeziumOptions{Notifications: bytes.NewReader(ev)})
	want := mustAccept(t, b)
	other := strings.Join(twin(t, plain.lines), "\n")
	for _, table := range []string{"", "customers"} {
		_, _, f := convertFiles(t, DebeziumOptions{Table: table, Notifications: bytes.NewReader(ev)}, plain.String(), other)
		if f == nil || f.Obligation != "Unsupported" || !strings.Contains(f.Detail, "public.customers") || !strings.Contains(f.Detail, "inventory.customers") {
			t.Errorf("--table %q: %v, want Unsupported naming both tables", table, f)
		}
	}
	b, _, f := convertFiles(t, DebeziumOptions{Table: "public.customers", Notifications: bytes.NewReader(ev)}, plain.String(), other)
	if f != nil {
		t.Fatal(f)
	}
	if got := mustAccept(t, b); got.Cut.Digest != want.Cut.Digest || got.Cut.Scope != want.Cut.Scope {
		t.Errorf("public.customers: %s, want %s", got.Line(), want.Line())
	}
	// The other schema's table has events but no window rows of its own:
	// never its cut.
	_, _, f = convertFiles(t, DebeziumOptions{Table: "inventory.customers", Notifications: bytes.NewReader(ev)}, plain.String(), other)
	if f == nil {
		t.Errorf("inventory.customers accepted")
	}
}

// Events of two topics at one position are in no evidenced order; a
// window's rows at a position where no window closes are no Debezium
// delivery; a line of no dump format is Unsupported naming it, not a
// Reject.
func TestDebeziumDeliveryUnsupported(t *testing.T) {
	plain, copyAt := copyRun(pgRec())
	lines := append([]string(nil), plain.lines...)
	atOnePosition(t, lines, copyAt, copyAt+2)
	topics := byTopic(t, debeziumOrder(t, lines))
	// the twin of a COPY row at the COPY's own position, in another topic
	m := parseLine(t, lines[copyAt+1])
	src(m)["schema"] = "inventory"
	_, _, f := convertFiles(t, DebeziumOptions{Table: "public.customers"}, strings.Join(topics["customers"], "\n"), strings.Join(topics["debezium_signal"], "\n"), marshal(m))
	if f == nil || f.Field != "source.sequence" || !strings.Contains(f.Detail, "two topics at one source position") {
		t.Errorf("two topics at one position: %v", f)
	}
	// A window's row moved to a position where no window closes.
	rows := topics["customers"]
	for i, l := range rows {
		if m := parseLine(t, l); m["op"] == "r" {
			src(m)["sequence"] = `["1000","1001"]`
			rows = append(append([]string{marshal(m)}, rows[:i]...), rows[i+1:]...)
			break
		}
	}
	_, _, f = convertFiles(t, DebeziumOptions{Table: "public.customers"}, strings.Join(rows, "\n"), strings.Join(topics["debezium_signal"], "\n"))
	if f == nil || f.Field != "op" {
		t.Errorf("a row where no window closes: %v", f)
	}
	for _, bad := range []string{"garbage", `{"topic":"t","partition":0,"offset":1,"payload":7}`, "{\"id\":1}\tnot json", `{"payload":`} {
		_, _, f := convertFiles(t, DebeziumOptions{}, plain.String()+bad+"\n")
		if f == nil || f.Obligation != "Unsupported" || f.Field != "format" || f.Line != int64(len(plain.lines)+1) {
			t.Errorf("%q: %v, want Unsupported naming line %d", bad, f, len(plain.lines)+1)
		}
	}
}

// Issue 34 item 5 and "one position, several events": a redelivery is told
// by position and content. Dropped, the Accept rests on a consumer that
// applies each position once and says so; applied (--redelivery apply), a
// stale one after a newer event is the Reject an upsert sink deserves, and
// one that changes nothing is harmless; a signal row is applied to no
// table. A COPY's events share a position
// and are no redeliveries of each other; redelivered, they are dropped.
func TestDebeziumRedeliveryNamed(t *testing.T) {
	r := pgRec()
	r.execute()
	r.open("c1")
	r.close("c1")
	r.read(cust(2, "bob"))
	r.update(cust(2, "bob"), cust(2, "bob2"))
	stale := r.lines[len(r.lines)-1]
	r.update(cust(2, "bob2"), cust(2, "bob3"))
	latest := r.lines[len(r.lines)-1]
	clean := r.String()
	max := json.RawMessage("2")
	b, conv, f := convertFiles(t, DebeziumOptions{Table: "customers", MaxKey: max}, clean)
	if f != nil || strings.Contains(strings.Join(conv.Assumes, ";"), "redelivered") {
		t.Fatalf("clean: %v %q", f, conv.Assumes)
	}
	want := mustAccept(t, b)

	for name, tc := range map[string]struct {
		redelivered, mode string
		accept, assumes   bool
	}{
		"stale dropped":        {stale, "drop", true, true},
		"stale applied":        {stale, "apply", false, false},
		"latest dropped":       {latest, "", true, true},
		"latest applied":       {latest, "apply", true, false},
		"signal":               {r.lines[2], "", true, false},
		"snapshot row":         {r.lines[3], "", true, true},
		"snapshot row applied": {r.lines[3], "apply", false, false},
	} {
		t.Run(name, func(t *testing.T) {
			b, conv, f := convertFiles(t, DebeziumOptions{Table: "customers", MaxKey: max, Redelivery: tc.mode}, clean+tc.redelivered+"\n")
			if f != nil {
				t.Fatal(f)
			}
			assumed := strings.Contains(strings.Join(conv.Assumes, ";"), "a consumer that applies each source position once: 1 redelivered event")
			if assumed != tc.assumes {
				t.Errorf("assumes %q", conv.Assumes)
			}
			if !tc.accept {
				mustReject(t, b, "")
				return
			}
			if got := mustAccept(t, b); got.Cut.Digest != want.Cut.Digest {
				t.Errorf("%s, want %s", got.Line(), want.Line())
			}
		})
	}

	// A COPY at one position, redelivered whole after a restart.
	plain, copyAt := copyRun(pgRec())
	ev, _ := os.ReadFile("testdata/debezium-customers.notifications.jsonl")
	b, _ = convertOpt(t, plain.String(), DebeziumOptions{Notifications: bytes.NewReader(ev)})
	want = mustAccept(t, b)
	lines := append([]string(nil), plain.lines...)
	atOnePosition(t, lines, copyAt, copyAt+2)
	lines = append(lines, lines[copyAt:copyAt+3]...)
	b, conv, f = convertFiles(t, DebeziumOptions{Table: "customers", Notifications: bytes.NewReader(ev)}, strings.Join(lines, "\n"))
	if f != nil {
		t.Fatal(f)
	}
	if got := mustAccept(t, b); got.Cut.Digest != want.Cut.Digest || !strings.Contains(strings.Join(conv.Assumes, ";"), ": 3 redelivered") {
		t.Errorf("COPY redelivered: %s %q, want %s", got.Line(), conv.Assumes, want.Line())
	}
	// At a position its topic passed, an event of other content is no
	// redelivery: the topic's order is not evidenced.
	m := parseLine(t, lines[copyAt])
	m["after"].(map[string]any)["name"] = "changed"
	lines[len(lines)-2] = marshal(m)
	if _, _, f = convertFiles(t, DebeziumOptions{Table: "customers"}, strings.Join(lines, "\n")); f == nil || f.Field != "source.sequence" {
		t.Errorf("another event at a passed position: %v", f)
	}
}

// jsonRun is a MySQL run with a JSON column: the snapshot renders it as
// snap does, the binlog compactly.
func jsonRun(snap func(string) string) *dbzRec {
	r := mysqlRec()
	c := func(id int, attrs string) map[string]any { return row("id", id, "attrs", attrs) }
	r.execute()
	r.update(c(2, `{"a":1}`), c(2, `{"a":2}`))
	r.open("c1")
	r.create(c(3, `{"z":[1,{"y":null}]}`))
	r.close("c1")
	r.read(c(1, snap(`{"a":1,"b":[1,2]}`)))
	r.read(c(2, snap(`{"a":2}`)))
	r.update(c(1, `{"a":1,"b":[1,2]}`), c(1, `{"a":3}`))
	return r
}

// withSchema wraps each event in the schema the JSON converter writes,
// typing attrs io.debezium.data.Json.
func withSchema(t testing.TB, lines []string) string {
	cols := `[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":true,"name":"io.debezium.data.Json","version":1,"field":"attrs"}]`
	schema := `{"type":"struct","fields":[{"type":"struct","fields":` + cols + `,"optional":true,"name":"shop.shop.customers.Value","field":"before"},` +
		`{"type":"struct","fields":` + cols + `,"optional":true,"name":"shop.shop.customers.Value","field":"after"},` +
		`{"type":"struct","fields":[],"optional":false,"name":"io.debezium.connector.mysql.Source","field":"source"},{"type":"string","optional":false,"field":"op"}],` +
		`"optional":false,"name":"shop.shop.customers.Envelope","version":2}`
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, `{"schema":%s,"payload":%s}`+"\n", schema, l)
	}
	return b.String()
}

// Finding: MySQL renders a JSON column {"a": 2} in snapshot reads and
// {"a":2} from the binlog; compared as text, the clean run is a stale read
// (O2). Typed io.debezium.data.Json by the schema, or named by
// --json-columns, the column compares as parsed JSON, and the digest is
// the compact rendering's.
func TestDebeziumJSONColumns(t *testing.T) {
	compact := jsonRun(func(s string) string { return s })
	spaced := jsonRun(func(s string) string {
		s = strings.ReplaceAll(s, ":", ": ")
		return strings.ReplaceAll(s, ",", ", ")
	})
	opt := DebeziumOptions{Table: "customers", MaxKey: json.RawMessage("3")}
	want := mustAccept(t, mustConvert(t, compact.String(), opt))
	mustReject(t, mustConvert(t, spaced.String(), opt), "O2")
	for name, in := range map[string]string{"schema": withSchema(t, spaced.lines), "--json-columns": spaced.String()} {
		o := opt
		if name == "--json-columns" {
			o.JSONColumns = []string{"attrs"}
		}
		got := mustAccept(t, mustConvert(t, in, o))
		if got.Cut.Digest != want.Cut.Digest || got.Cut.State["1"] != `{"attrs":"{\"a\":3}","id":1}` {
			t.Errorf("%s: %s %v, want %s", name, got.Line(), got.Cut.State, want.Line())
		}
	}
	// Not JSON text in a JSON column is Unsupported naming the column.
	bad := strings.Replace(withSchema(t, spaced.lines), `"{\"a\":3}"`, `"{\"a\":"`, 1)
	convertFails(t, bad, opt, "after.attrs")
}

// withTransactions gives each event the envelope's transaction block
// (provide.transaction.metadata), its id txId:lsn as the PostgreSQL
// connector writes it, and returns the END record of the last transaction.
func withTransactions(t testing.TB, lines []string, count int) ([]string, string) {
	var out []string
	id := ""
	for _, l := range lines {
		m := parseLine(t, l)
		s := src(m)
		id = fmt.Sprintf("%v:%v", s["txId"], s["lsn"])
		m["transaction"] = map[string]any{"id": id, "total_order": 1, "data_collection_order": 1}
		out = append(out, marshal(m))
	}
	return out, marshal(map[string]any{"status": "END", "id": id, "ts_ms": 1764550009000, "event_count": count,
		"data_collections": []any{map[string]any{"data_collection": "public.customers", "event_count": count}}})
}

// Transaction labels (txId, transaction.id, gtid) are the bundle's x: the
// Accept no longer rests on a row-event cut "without transaction labels";
// the frontier's transaction is whole when the transaction metadata's END
// record counts its events, and the Accept says it rests on it otherwise.
// A transaction's events apart in commit order are Unsupported.
func TestDebeziumTransactions(t *testing.T) {
	ev, _ := os.ReadFile("testdata/debezium-customers.notifications.jsonl")
	for _, r := range []*dbzRec{pgRec(), mysqlRec()} {
		run := sampleRun(r, "bob2")
		lines := run.lines
		if r.mysql { // GTID mode on: each transaction's gtid
			for i, l := range lines {
				m := parseLine(t, l)
				src(m)["gtid"] = fmt.Sprintf("3e11fa47-71ca-11e1-9e33-c80aa9429562:%d", 10+i)
				if m["op"] == "r" {
					src(m)["gtid"] = src(parseLine(t, lines[i-1]))["gtid"]
				}
				lines[i] = marshal(m)
			}
		}
		b, conv, f := convertFiles(t, DebeziumOptions{Table: "customers", Notifications: bytes.NewReader(ev)}, strings.Join(lines, "\n"))
		if f != nil {
			t.Fatal(f)
		}
		res := mustAccept(t, b)
		all := strings.Join(append(res.Assumes, conv.Assumes...), "; ")
		if strings.Contains(all, "without transaction labels") || !strings.Contains(all, "a row-event cut unless the recording's last transaction") {
			t.Errorf("labelled: %s", all)
		}
		// Unlabelled: the verifier says the closure is not evidenced.
		m := parseLine(t, lines[1])
		src(m)["txId"], src(m)["gtid"] = nil, nil
		un := append(append([]string{lines[0]}, marshal(m)), lines[2:]...)
		b, conv, _ = convertFiles(t, DebeziumOptions{Table: "customers", Notifications: bytes.NewReader(ev)}, strings.Join(un, "\n"))
		if res := mustAccept(t, b); !strings.Contains(strings.Join(res.Assumes, ";"), "without transaction labels") || len(conv.Assumes) != 0 {
			t.Errorf("unlabelled: %q %q", res.Assumes, conv.Assumes)
		}
		// A transaction's events apart: no commit order.
		m = parseLine(t, lines[4])
		src(m)["txId"], src(m)["gtid"] = src(parseLine(t, lines[1]))["txId"], src(parseLine(t, lines[1]))["gtid"]
		apart := append(append(append([]string(nil), lines[:4]...), marshal(m)), lines[5:]...)
		if f := convertFails(t, strings.Join(apart, "\n"), DebeziumOptions{}, "transaction"); f.Line != 5 {
			t.Errorf("a transaction's events apart: the failure names line %d, want 5: %v", f.Line, f)
		}
	}
	// The END record of the last transaction counts its events: whole.
	lines, end := withTransactions(t, sampleRun(pgRec(), "bob2").lines, 1)
	txns := `{"status":"BEGIN","id":"x","event_count":null}` + "\n" + end + "\n"
	b, conv, f := convertFiles(t, DebeziumOptions{Table: "customers", Notifications: bytes.NewReader(ev)}, strings.Join(lines, "\n"), txns)
	if f != nil {
		t.Fatal(f)
	}
	if res := mustAccept(t, b); len(conv.Assumes) != 0 || strings.Contains(strings.Join(res.Assumes, ";"), "row-event") {
		t.Errorf("whole: %q %q", res.Assumes, conv.Assumes)
	}
	// One event short of its END's count: the transaction may be cut off.
	_, end = withTransactions(t, sampleRun(pgRec(), "bob2").lines, 2)
	_, conv, _ = convertFiles(t, DebeziumOptions{Table: "customers", Notifications: bytes.NewReader(ev)}, strings.Join(lines, "\n"), end)
	if !strings.Contains(strings.Join(conv.Assumes, ";"), "no transaction metadata END record counts its 1 events") {
		t.Errorf("cut off: %q", conv.Assumes)
	}
}

// The offsets in their real forms: a line of the offsets topic ([key,
// map]), a console consumer's key⇥value line, a kcat -J record and the
// Kafka Connect REST body (GET /connectors/{name}/offsets) state the same
// maximum key; a serialized null maximum key is an empty table.
func TestDebeziumOffsetForms(t *testing.T) {
	r := pgRec()
	r.execute()
	r.open("c1")
	r.close("c1")
	r.read(cust(1, "alice"))
	r.read(cust(2, "bob"))
	offset := func(max string) string {
		return `{"lsn_proc":1200,"lsn":1200,"txId":600,"ts_usec":1764550001200000,` +
			`"incremental_snapshot_collections":"[{\"incremental_snapshot_collections_id\":\"public.customers\",\"incremental_snapshot_collections_additional_condition\":null,\"incremental_snapshot_collections_surrogate_key\":null}]",` +
			`"incremental_snapshot_primary_key":"` + javaInt4 + `","incremental_snapshot_maximum_key":"` + max + `","incremental_snapshot_correlation_id":null}`
	}
	key := `["shop",{"server":"shop"}]`
	m := offset(javaInt4)
	for name, in := range map[string]string{
		"pair":           "[" + key + "," + m + "]\n",
		"key⇥value":      key + "\t" + m + "\n",
		"kcat -J":        marshal(map[string]any{"topic": "connect-offsets", "partition": 0, "offset": 7, "key": key, "payload": m}) + "\n",
		"REST":           `{"offsets":[{"partition":{"server":"shop"},"offset":` + m + `}]}`,
		"REST, indented": "{\n  \"offsets\": [\n    {\"partition\": {\"server\": \"shop\"},\n     \"offset\": " + m + "}\n  ]\n}\n",
	} {
		b, notes := convertOpt(t, r.String(), DebeziumOptions{Offsets: strings.NewReader(in)})
		// the maximum key 4 is stated: keys above it are certified absent
		if res := mustAccept(t, b); res.Cut.Scope != "[−∞, 3) ∪ [5, +∞)" || len(notes) != 1 {
			t.Errorf("%s: scope %s notes %q", name, res.Cut.Scope, notes)
		}
	}
	convertFails(t, r.String(), DebeziumOptions{Offsets: strings.NewReader("not an offset\n")}, "offsets")

	// An empty table: one window, the maximum-key query found no row.
	e := pgRec()
	e.execute()
	e.open("c1")
	e.close("c1")
	convertFails(t, e.String(), DebeziumOptions{}, "snapshot-window-open")
	b, _ := convertOpt(t, e.String(), DebeziumOptions{Offsets: strings.NewReader(key + "\t" + offset(javaNull) + "\n")})
	if res := mustAccept(t, b); res.Cut.Scope != "[−∞, +∞)" || res.Cut.Present != 0 {
		t.Errorf("empty table: %s", res.Line())
	}
}
