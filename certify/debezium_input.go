package certify

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// How a Debezium recording comes out of Kafka: the dumps of its topics, in
// any of the common formats, and the order the evidence fixes.

// DebeziumInput is one file of a recording: a dump of one or more topics.
type DebeziumInput struct {
	Name string
	R    io.Reader
}

// dbzRecord is one Kafka record of a dump: its value, nil for a tombstone.
type dbzRecord struct {
	line      int
	topic     string // kcat -J's topic and partition: "" when the dump does not say
	partition int
	value     []byte
}

// readDump reads a dump of Kafka records, one a line, in each of the common
// formats: the value alone (kafka-console-consumer, kcat), key⇥value
// (kafka-console-consumer --property print.key=true, kcat -K'\t'), kcat -J
// envelopes; a tombstone is null, NULL (kcat -Z) or empty. A line of no
// format is Unsupported naming it (never a Reject: the dump is not the run),
// field the input's kind.
func readDump(r io.Reader, name, field string, each func(dbzRecord) *Failure) (*Failure, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 || err == nil {
			if rec, f := dumpRecord(line, n, name); f != nil {
				f.Field = field
				if field == "format" {
					f.Line = int64(n)
				}
				return f, nil
			} else if rec != nil {
				if f := each(*rec); f != nil {
					return f, nil
				}
			}
		}
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func dumpRecord(line []byte, n int, name string) (*dbzRecord, *Failure) {
	b := bytes.TrimSpace(line)
	if len(b) == 0 {
		return nil, nil
	}
	rec := &dbzRecord{line: n}
	if validJSON(b) {
		var k struct {
			Topic     *string         `json:"topic"`
			Partition int             `json:"partition"`
			Offset    *int64          `json:"offset"`
			Payload   json.RawMessage `json:"payload"`
		}
		// (decoded only when it may be one: most lines are values)
		if b[0] == '{' && bytes.Contains(b, []byte(`"topic"`)) && bytes.Contains(b, []byte(`"offset"`)) &&
			json.Unmarshal(b, &k) == nil && k.Topic != nil && k.Offset != nil {
			// kcat -J: the value is the payload string, null for a tombstone
			rec.topic, rec.partition = *k.Topic, k.Partition
			var s *string
			if k.Payload != nil && json.Unmarshal(k.Payload, &s) != nil {
				return nil, dumpFail(name, n, "a kcat -J record whose payload is not a string or null")
			}
			if s != nil {
				rec.value = []byte(*s)
			}
		} else {
			rec.value = b
			if string(b) != "null" {
				return rec, nil // valid JSON already
			}
		}
	} else if tab := bytes.IndexByte(b, '\t'); tab >= 0 {
		rec.value = bytes.TrimSpace(b[tab+1:])
	} else if string(b) != "NULL" {
		return nil, dumpFail(name, n, "neither a JSON value, a key⇥value line nor a kcat -J record")
	}
	switch v := bytes.TrimSpace(rec.value); string(v) {
	case "", "null", "NULL":
		rec.value = nil
	default:
		if !validJSON(v) {
			return nil, dumpFail(name, n, "the record's value is not JSON")
		}
	}
	return rec, nil
}

func dumpFail(name string, n int, format string, a ...any) *Failure {
	f := unsupported("line", "%s line %d: "+format, append([]any{name, n}, a...)...)
	return f
}

// dbzEvent is one change event of the recording, parsed.
type dbzEvent struct {
	file, line int
	stream     int // the topic (partition) it was delivered on, within its file
	seq        int // its place in its stream's delivery order
	env        dbzEnvelope
	table      string // schema.table (PostgreSQL) or db.table (MySQL)
	pos        dbzPos
	sum        [16]byte // its content (SHA-256, halved), to tell a redelivery from another event at its position
	read       bool     // an incremental-snapshot row: placed by its window's close
	initial    bool     // a row of an initial snapshot
	signal     bool     // a row of the signalling table
	ours       bool     // a row of the captured table
	redelivery bool
	schema     int // its schema's number (1-based; 0: none), whose JSON columns are jsonCols
	jsonCols   map[string]bool
	after      []byte // the after image in canonical form, once placed (aliases the sort's record)
	// kept from the source block
	db, snapshot, txID, gtid string
}

// parse classifies one record: a change event, a notification, or
// something that changes no row (counted in c.skipped).
func (c *dbzConverter) parse(file int, rec dbzRecord) *Failure {
	if rec.value == nil {
		c.skipped["tombstones"]++
		return nil
	}
	// aliases the reader's buffer, read into c.raw: nothing raw outlives parse
	top, err := readObject(&c.raw.top, rec.value)
	if err != nil {
		return c.failAt(file, rec.line, "line", "a record value that is not a JSON object")
	}
	var schema json.RawMessage
	if p := top.get("payload"); p != nil && top.get("schema") != nil {
		schema = top.get("schema")
		if string(bytes.TrimSpace(p)) == "null" {
			c.skipped["tombstones"]++
			return nil
		}
		if top, err = readObject(&c.raw.top, p); err != nil {
			return c.failAt(file, rec.line, "payload", "a payload that is not a JSON object")
		}
	}
	has := func(names ...string) bool {
		for _, n := range names {
			if top.get(n) == nil {
				return false
			}
		}
		return true
	}
	// ts_ms alone (json.Unmarshal into a map keeps one of repeated names)
	heartbeat := len(top) > 0 && !slices.ContainsFunc(top, func(m rawMember) bool { return string(m.name) != "ts_ms" })
	switch {
	case heartbeat: // io.debezium.connector.common.Heartbeat
		c.skipped["heartbeats"]++
		return nil
	case has("status", "id") && !has("op"): // the transaction topic's BEGIN and END
		c.skipped["transaction metadata records"]++
		var end struct {
			Status, ID string
			Count      *int `json:"event_count"`
		}
		if json.Unmarshal(rec.value, &end) == nil && end.Status == "END" && end.Count != nil {
			if _, err := c.ends.put(binary.AppendUvarint(appendStr(nil, end.ID), uint64(*end.Count))); err != nil {
				c.spErr = err
				return &Failure{}
			}
		}
		return nil
	case has("aggregate_type"): // a notification on the same dump
		c.notes2 = append(c.notes2, bytes.Clone(rec.value)) // rec.value is the reader's buffer
		return nil
	}
	e := &dbzEvent{file: file, line: rec.line}
	err = e.envelope(top, &c.raw)
	if err != nil {
		return c.failAt(file, rec.line, "line", "not a Debezium change event: %v", err)
	}
	env := &e.env
	if env.Op == "m" { // a logical decoding message: no row
		c.skipped[`"m" messages`]++
		return nil
	}
	if env.Op == "" && env.Source == nil && env.Before == nil && env.After == nil {
		return c.failAt(file, rec.line, "source", "not a Debezium change event (no op, before, after or source): a record unwrapped by ExtractNewRecordState cannot be placed in commit order")
	}
	if env.Source == nil {
		return c.failAt(file, rec.line, "source", "a change event without source: its table and commit position are unknown")
	}
	connector := rawString(env.Source.get("connector"))
	switch {
	case connector != "postgresql" && connector != "mysql":
		return c.failAt(file, rec.line, "source.connector", "connector %q: the converter reads the postgresql and mysql connectors' envelopes", connector)
	case c.connector == "":
		c.connector = connector
	case connector != c.connector:
		return c.failAt(file, rec.line, "source.connector", "connector %q after %q: one recording is one connector's", connector, c.connector)
	}
	if rawString(env.Source.get("table")) == "" {
		return c.failAt(file, rec.line, "source.table", "an event without source.table: it cannot be told to belong to the table or not")
	}
	e.table = c.intern(fullName(env.Source))
	e.db, e.snapshot = rawString(env.Source.get("db")), rawString(env.Source.get("snapshot"))
	e.db, e.snapshot = c.intern(e.db), c.intern(e.snapshot)
	e.txID = string(bytes.TrimSpace(env.Source.get("txId")))
	e.gtid = rawString(env.Source.get("gtid"))
	if e.initial = env.Op == "r" && e.snapshot != "incremental"; e.initial {
		c.noteTable(e)
		return nil // an initial snapshot's row: no place in the commit order
	}
	e.read = env.Op == "r"
	c.file, c.line = file, rec.line
	var f *Failure
	if e.pos, f = c.position(env.Source); f != nil {
		return f
	}
	// the images go on in canonical form: the content's sum is taken of it,
	// and a row's value is written in it (values)
	before, after := []byte(canonRow(env.Before)), []byte(canonRow(env.After))
	sum := sha256.Sum256([]byte(env.Op + "\x00" + string(before) + "\x00" + string(after) + "\x00" + e.table))
	e.sum = [16]byte(sum[:16])
	if len(schema) > 0 { // one map per distinct schema, not per event
		n, ok := c.schemas[string(schema)]
		if !ok {
			c.schemaCols = append(c.schemaCols, jsonColumns(schema))
			n = len(c.schemaCols)
			c.schemas[string(schema)] = n
		}
		e.schema = n
	}
	topic := rec.topic
	if topic == "" {
		topic = "table " + e.table // Debezium writes each table to a topic of its own
	}
	if l := &c.lastStream; l.file != file || l.topic != topic || l.partition != rec.partition {
		key := fmt.Sprintf("%d\x00%s\x00%d", file, topic, rec.partition)
		s, ok := c.streams[key]
		if !ok {
			s = len(c.streams)
			c.streams[key] = s
		}
		*l = lastStream{file, topic, rec.partition, s}
	}
	e.stream = c.lastStream.n
	c.noteTable(e)
	if err := c.place(e, before, after); err != nil {
		c.spErr = err
		return &Failure{} // stops the reading; FromDebeziumFiles answers spErr
	}
	return nil
}

// place puts an event in the sort by its place in the commit order, with
// its row images, once sequence has placed it in its stream.
func (c *dbzConverter) place(e *dbzEvent, before, after []byte) error {
	if c.orderFail != nil {
		return nil // the recording is Unsupported: nothing more is placed
	}
	if err := c.sequence(e); err != nil || c.orderFail != nil {
		return err
	}
	c.keyBuf = eventKey(c.keyBuf[:0], e)
	c.payBuf = eventPayload(c.payBuf[:0], e, before, after)
	c.events.add(c.keyBuf, c.payBuf)
	return nil
}

// intern keeps one copy of a name many events carry.
func (c *dbzConverter) intern(s string) string {
	if t, ok := c.names[s]; ok {
		return t
	}
	c.names[s] = s
	return s
}

// envelope decodes a change event's members from the record's top level.
// The row images are kept as they came (the raw members), go with the
// event into the sort by position, and are decoded again when it is
// placed: a decoded image is several times its text. The objects are read
// into st.
func (e *dbzEvent) envelope(top rawMembers, st *rawStore) (err error) {
	env := &e.env
	for _, m := range []struct {
		name string
		to   *rawMembers
		buf  *rawMembers
	}{{"source", &env.Source, &st.source}, {"before", &env.Before, &st.before}, {"after", &env.After, &st.after}} {
		if raw := top.get(m.name); raw != nil {
			if *m.to, err = readObject(m.buf, raw); err != nil {
				return fmt.Errorf("member %q: %v", m.name, err)
			}
		}
	}
	if raw := top.get("op"); raw != nil && raw[0] == '"' {
		env.Op, err = jsonText(raw)
	} else if raw != nil {
		err = json.Unmarshal(raw, &env.Op)
	}
	if err != nil {
		return fmt.Errorf("member \"op\": %v", err)
	}
	if raw := top.get("transaction"); raw != nil && string(raw) != "null" {
		if err := json.Unmarshal(raw, &env.Transaction); err != nil {
			return fmt.Errorf("member \"transaction\": %v", err)
		}
	}
	return nil
}

// fullName is the table's name as Debezium's collections name it:
// schema.table for PostgreSQL, db.table for MySQL.
func fullName(src rawMembers) string {
	db, schema, table := rawString(src.get("db")), rawString(src.get("schema")), rawString(src.get("table"))
	if schema != "" {
		return schema + "." + table
	}
	if db != "" {
		return db + "." + table
	}
	return table
}

// matches says whether a table option or collection id (table,
// schema.table, db.table or db.schema.table) names a table of full name
// full in database db.
func matches(name, full, db string) bool {
	bare := full[strings.LastIndexByte(full, '.')+1:]
	return name == full || name == bare || name == db+"."+full
}

// jsonColumns reads the after struct's io.debezium.data.Json columns from
// an event's schema.
func jsonColumns(schema json.RawMessage) map[string]bool {
	type field struct {
		Field  string  `json:"field"`
		Name   string  `json:"name"`
		Fields []field `json:"fields"`
	}
	var s field
	if schema == nil || json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var cols map[string]bool
	for _, f := range s.Fields {
		if f.Field != "after" && f.Field != "before" {
			continue
		}
		for _, col := range f.Fields {
			if col.Name == "io.debezium.data.Json" {
				if cols == nil {
					cols = map[string]bool{}
				}
				cols[col.Field] = true
			}
		}
	}
	return cols
}

// failAt is an Unsupported failure naming the input line.
func (c *dbzConverter) failAt(file, line int, field, format string, a ...any) *Failure {
	f := unsupported(field, format, a...)
	f.Line = int64(line)
	if len(c.inputs) > 1 {
		f.Detail = c.inputs[file] + ": " + f.Detail
	}
	return f
}
