package certify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// corpus reads a file of testdata/debezium-corpus: one JSON value or more.
func corpus(t *testing.T, name string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile("testdata/debezium-corpus/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, m)
	}
	return out
}

// clone is a deep copy of a JSON value.
func clone(t *testing.T, m map[string]any) map[string]any {
	var c map[string]any
	if err := json.Unmarshal([]byte(marshal(m)), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// corpusRun is a recording assembled from the MySQL connector's change
// event with its schema, changing ids, positions and values: Anne updated
// before the snapshot, 1005 inserted inside the first window (so discarded
// from its chunk, which read it), 1006 read by the second chunk, a last
// window that reads nothing, Anne deleted after. delivered: Debezium's
// order, the schema kept, the table's and the signalling table's topics in
// two files (the first as kcat -J); else the converter's former order,
// payloads only, one file.
func corpusRun(t *testing.T, delivered bool) []string {
	tmpl := corpus(t, "mysql-change-event-with-schema.json")[0]
	pos := 100
	var table, signals []string
	var reads []map[string]any // the next window's rows
	ev := func(tab, op string, before, after map[string]any, snapshot any) string {
		m := clone(t, tmpl)
		p := m["payload"].(map[string]any)
		s := p["source"].(map[string]any)
		p["op"], p["before"], p["after"] = op, before, after
		s["table"], s["snapshot"], s["pos"], s["query"] = tab, snapshot, pos, nil
		if !delivered {
			m = p
		}
		return marshal(m)
	}
	cust := func(id int, first string) map[string]any {
		return map[string]any{"id": id, "first_name": first, "last_name": "Kretchmar", "email": fmt.Sprintf("%d@noanswer.org", id)}
	}
	change := func(op string, before, after map[string]any) {
		pos += 100
		table = append(table, ev("customers", op, before, after, false))
	}
	signal := func(id, typ, data string) {
		pos += 100
		s := ev("debezium_signal", "c", nil, map[string]any{"id": id, "type": typ, "data": data}, false)
		var rows []string // at the close's position
		for _, r := range reads {
			rows = append(rows, ev("customers", "r", nil, r, "incremental"))
		}
		if typ == "snapshot-window-close" && delivered {
			table = append(table, rows...) // sent before the close row's event
		}
		signals = append(signals, s)
		if !delivered {
			signals = append(signals, rows...)
		}
		reads = nil
	}
	read := func(after map[string]any) { reads = append(reads, after) }
	signal("ad-hoc-1", "execute-snapshot", `{"data-collections": ["inventory.customers"], "type": "incremental"}`)
	change("u", cust(1004, "Anne"), cust(1004, "Anne Marie"))
	signal("c1-open", "snapshot-window-open", "")
	change("c", nil, cust(1005, "Ben"))
	read(cust(1004, "Anne Marie"))
	signal("c1-close", "snapshot-window-close", "")
	signal("c2-open", "snapshot-window-open", "")
	read(cust(1006, "Cleo"))
	signal("c2-close", "snapshot-window-close", "")
	signal("c3-open", "snapshot-window-open", "")
	signal("c3-close", "snapshot-window-close", "")
	change("d", cust(1004, "Anne Marie"), nil)
	if !delivered {
		// one file in the connector's commit order
		return []string{strings.Join(mergeByPos(t, table, signals), "\n")}
	}
	var kcat strings.Builder
	for i, l := range table {
		fmt.Fprintf(&kcat, "%s\n", marshal(map[string]any{"topic": "mysql-server-1.inventory.customers", "partition": 0, "offset": i, "key": `{"id":0}`, "payload": l}))
	}
	return []string{kcat.String(), strings.Join(signals, "\n")}
}

// mergeByPos interleaves two lists of events in source.pos order, a
// window's rows staying after the close they follow.
func mergeByPos(t *testing.T, a, b []string) []string {
	at := func(l string) float64 { return src(parseLine(t, l))["pos"].(float64) }
	var out []string
	for len(a) > 0 || len(b) > 0 {
		if len(b) == 0 || len(a) > 0 && at(a[0]) < at(b[0]) {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}

// corpusNotifications states the chunk ends from Debezium's documented
// notifications, values changed.
func corpusNotifications(t *testing.T) string {
	var b strings.Builder
	for _, end := range []string{"1005", "1006"} {
		n := corpus(t, "notification-in-progress.json")[0]
		d := n["additional_data"].(map[string]any)
		d["data_collections"], d["current_collection_in_progress"], d["maximum_key"], d["last_processed_key"] = "inventory.customers", "inventory.customers", "1006", end
		b.WriteString(marshal(n) + "\n")
	}
	n := corpus(t, "notification-table-scan-completed.json")[0]
	d := n["additional_data"].(map[string]any)
	d["data_collection"], d["scanned_collection"] = "inventory.customers", "inventory.customers"
	b.WriteString(marshal(n) + "\n")
	return b.String()
}

// Recordings of Debezium's own record shapes: the run as Kafka delivers it
// (schema, Debezium's order, two topics, kcat -J, the transaction topic's
// records beside them) is the cut of the same run in the converter's
// former order, over the whole table.
func TestDebeziumCorpus(t *testing.T) {
	var txns strings.Builder
	for _, m := range corpus(t, "transaction-metadata.json") {
		txns.WriteString(marshal(m) + "\n")
	}
	opt := func() DebeziumOptions {
		return DebeziumOptions{Table: "inventory.customers", Notifications: strings.NewReader(corpusNotifications(t))}
	}
	b, _, f := convertFiles(t, opt(), corpusRun(t, false)...)
	if f != nil {
		t.Fatal(f)
	}
	want := mustAccept(t, b)
	wantState(t, want, map[string]string{
		"1005": `{"email":"1005@noanswer.org","first_name":"Ben","id":1005,"last_name":"Kretchmar"}`,
		"1006": `{"email":"1006@noanswer.org","first_name":"Cleo","id":1006,"last_name":"Kretchmar"}`,
	})
	b, conv, f := convertFiles(t, opt(), append(corpusRun(t, true), txns.String())...)
	if f != nil {
		t.Fatal(f)
	}
	got := mustAccept(t, b)
	if got.Cut.Digest != want.Cut.Digest || got.Cut.Scope != "[−∞, +∞)" || want.Cut.Scope != got.Cut.Scope {
		t.Errorf("delivered: %s\nformer order: %s", got.Line(), want.Line())
	}
	if !strings.Contains(strings.Join(conv.Notes, ";"), "2 transaction metadata records skipped") {
		t.Errorf("notes %q", conv.Notes)
	}
}
