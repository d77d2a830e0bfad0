package certify

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
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
	top       rawMembers // the value's members, when it was read as an object with its line
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
			var rec dbzRecord
			if ok, f := dumpRecord(line, n, name, &rec, nil); f != nil {
				return dumpFailure(f, field, n), nil
			} else if ok {
				if f := each(rec); f != nil {
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

// dumpFailure is a line's failure as the input's kind field reports it.
func dumpFailure(f *Failure, field string, n int) *Failure {
	f.Field = field
	if field == "format" {
		f.Line = int64(n)
	}
	return f
}

// dumpRecord reads line n into rec; ok is false for a blank line. With
// st, a line that is a JSON object and not a kcat -J record is read into
// st as it is validated (rec.top, readEnvelope), so it is read once.
func dumpRecord(line []byte, n int, name string, rec *dbzRecord, st *rawStore) (ok bool, f *Failure) {
	b := bytes.TrimSpace(line)
	if len(b) == 0 {
		return false, nil
	}
	*rec = dbzRecord{line: n}
	if st != nil && b[0] == '{' {
		if m, err := readEnvelope(st, b); err == nil && !kcatLike(m) {
			rec.value, rec.top = b, m
			return true, nil
		}
	}
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
				return false, dumpFail(name, n, "a kcat -J record whose payload is not a string or null")
			}
			if s != nil {
				rec.value = []byte(*s)
			}
		} else {
			rec.value = b
			if string(b) != "null" {
				return true, nil // valid JSON already
			}
		}
	} else if tab := bytes.IndexByte(b, '\t'); tab >= 0 {
		rec.value = bytes.TrimSpace(b[tab+1:])
	} else if string(b) != "NULL" {
		return false, dumpFail(name, n, "neither a JSON value, a key⇥value line nor a kcat -J record")
	}
	switch v := bytes.TrimSpace(rec.value); string(v) {
	case "", "null", "NULL":
		rec.value = nil
	default:
		if !validJSON(v) {
			return false, dumpFail(name, n, "the record's value is not JSON")
		}
	}
	return true, nil
}

// kcatLike says an object may be a kcat -J record: json.Unmarshal, which
// the general path decodes it with, matches member names without case.
func kcatLike(m rawMembers) bool {
	var topic, offset bool
	for _, x := range m {
		topic = topic || bytes.EqualFold(x.name, []byte("topic"))
		offset = offset || bytes.EqualFold(x.name, []byte("offset"))
	}
	return topic && offset
}

func dumpFail(name string, n int, format string, a ...any) *Failure {
	f := unsupported("line", "%s line %d: "+format, append([]any{name, n}, a...)...)
	return f
}

// A dump's lines go to the converter in batches: each batch is prepared by
// one of GOMAXPROCS goroutines (a record's JSON is most of the converter's
// time) and applied in the dump's order on the caller's.
const batchBytes = 256 << 10

var batchLines = 1024 // (tests read a line a batch)

type dumpBatch struct {
	first int    // the first line's number
	buf   []byte // the lines' text
	ends  []int  // each line's end in buf
	err   error  // the reading's after the last line (io.EOF at the end)
	preps []dbzPrep
	names map[string]string // (known)
	done  chan struct{}
}

// prepare reads each line of the batch as readDump and prepare do.
func (b *dumpBatch) prepare(file int, name, prefix string) {
	if len(b.preps) < len(b.ends) {
		b.preps = append(b.preps, make([]dbzPrep, len(b.ends)-len(b.preps))...)
	}
	start := 0
	for i, end := range b.ends {
		p, n := &b.preps[i], b.first+i
		ok, f := dumpRecord(b.buf[start:end], n, name, &p.rec, &p.raw)
		start = end
		p.none, p.fail = !ok && f == nil, nil
		switch {
		case f != nil:
			p.fail = dumpFailure(f, "format", n)
		case ok:
			p.prepare(file, prefix, b.names)
		}
	}
}

// lineBuffered says whether a whole line is in br's buffer, so that reading
// it does not wait on the input.
func lineBuffered(br *bufio.Reader) bool {
	buf, _ := br.Peek(br.Buffered())
	return bytes.IndexByte(buf, '\n') >= 0
}

// readDumpParallel is readDump of file for the converter, each record
// prepared on another goroutine and applied here in the dump's order: the
// answer is that of preparing and applying each record in turn.
func (c *dbzConverter) readDumpParallel(r io.Reader, file int, name string) (*Failure, error) {
	prefix := ""
	if len(c.inputs) > 1 {
		prefix = c.inputs[file] + ": "
	}
	workers, lines := runtime.GOMAXPROCS(0), batchLines
	inflight := 2*workers + 1
	free := make(chan *dumpBatch, inflight)
	for range inflight {
		free <- &dumpBatch{done: make(chan struct{}, 1), names: map[string]string{}}
	}
	// (neither channel blocks: there are inflight batches)
	work, order := make(chan *dumpBatch, inflight), make(chan *dumpBatch, inflight)
	stop := make(chan struct{})
	for range workers {
		go func() {
			for b := range work {
				b.prepare(file, name, prefix)
				b.done <- struct{}{}
			}
		}()
	}
	go func() {
		defer close(work)
		defer close(order)
		br := bufio.NewReaderSize(r, batchBytes)
		for n := 1; ; {
			var b *dumpBatch
			select {
			case <-stop:
				return
			default:
			}
			select {
			case b = <-free:
			case <-stop:
				return
			}
			b.first, b.buf, b.ends, b.err = n, b.buf[:0], b.ends[:0], nil
			for b.err == nil && len(b.buf) < batchBytes && len(b.ends) < lines {
				if len(b.ends) > 0 && !lineBuffered(br) {
					break // the next line may wait on the input (a pipe): these go now
				}
				var line []byte
				line, b.err = readLine(br)
				b.buf = append(b.buf, line...)
				b.ends = append(b.ends, len(b.buf))
				n++
			}
			work <- b
			order <- b
			if b.err != nil {
				return
			}
		}
	}()
	// the batches own their text: on a failure the reader stops at its next
	// batch and the preparers with it, without being waited for (a pipe
	// may not end)
	defer close(stop)
	for b := range order {
		<-b.done
		if stopped(c.opt.Stop) {
			return nil, ErrStopped
		}
		for i := range b.ends {
			p := &b.preps[i]
			if p.none {
				continue
			}
			c.tick("reading")
			if f := c.apply(file, p); f != nil {
				return f, nil
			}
		}
		err := b.err
		free <- b
		if err == io.EOF {
			return nil, nil
		} else if err != nil {
			return nil, err
		}
	}
	return nil, nil
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

// dbzPrep is what the converter learns of a record from the record alone:
// records are prepared on several goroutines (readDumpParallel) and
// applied in their order. What it holds aliases the record's line.
type dbzPrep struct {
	rec  dbzRecord
	none bool     // a blank line: no record
	fail *Failure // the record cannot be read as what it claims to be
	skip string   // a record that changes no row: its kind, for c.skipped
	end  []byte   // a transaction END record's entry in the ends spool
	note bool     // a notification among the events
	// a change event: its connector, a failure found after the connector
	// is checked (source.table, the position), its schema and images in
	// canonical form
	e             dbzEvent
	connector     string
	late          *Failure
	schema        json.RawMessage
	before, after []byte
	raw           rawStore // the storage the record's objects are read into
	sumBuf        []byte
}

// prepare reads a record as apply needs it, with nothing of the records
// before it; prefix names the input in a failure's detail, names keeps the
// names the records repeat.
func (p *dbzPrep) prepare(file int, prefix string, names map[string]string) {
	rec := &p.rec
	p.fail, p.skip, p.end, p.note, p.late, p.schema = nil, "", p.end[:0], false, nil, nil
	failAt := func(field, format string, a ...any) *Failure {
		f := unsupported(field, format, a...)
		f.Line = int64(rec.line)
		f.Detail = prefix + f.Detail
		return f
	}
	if rec.value == nil {
		p.skip = "tombstones"
		return
	}
	top := rec.top // (read with the line when it is an object)
	if top == nil {
		var err error
		if top, err = readEnvelope(&p.raw, rec.value); err != nil {
			p.fail = failAt("line", "a record value that is not a JSON object")
			return
		}
	}
	if pl := top.get("payload"); pl != nil && top.get("schema") != nil {
		p.schema = top.get("schema")
		if string(bytes.TrimSpace(pl)) == "null" {
			p.skip = "tombstones"
			return
		}
		var err error
		if top, err = readEnvelope(&p.raw, pl); err != nil {
			p.fail = failAt("payload", "a payload that is not a JSON object")
			return
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
		p.skip = "heartbeats"
		return
	case has("status", "id") && !has("op"): // the transaction topic's BEGIN and END
		p.skip = "transaction metadata records"
		var end struct {
			Status, ID string
			Count      *int `json:"event_count"`
		}
		if json.Unmarshal(rec.value, &end) == nil && end.Status == "END" && end.Count != nil {
			p.end = binary.AppendUvarint(appendStr(p.end, end.ID), uint64(*end.Count))
		}
		return
	case has("aggregate_type"): // a notification on the same dump
		p.note = true
		return
	}
	e := &p.e
	*e = dbzEvent{file: file, line: rec.line}
	if err := e.envelope(top, &p.raw); err != nil {
		p.fail = failAt("line", "not a Debezium change event: %v", err)
		return
	}
	env := &e.env
	switch {
	case env.Op == "m": // a logical decoding message: no row
		p.skip = `"m" messages`
		return
	case env.Op == "" && env.Source == nil && env.Before == nil && env.After == nil:
		p.fail = failAt("source", "not a Debezium change event (no op, before, after or source): a record unwrapped by ExtractNewRecordState cannot be placed in commit order")
		return
	case env.Source == nil:
		p.fail = failAt("source", "a change event without source: its table and commit position are unknown")
		return
	}
	p.connector = known(names, env.Source.get("connector"))
	if p.connector != "postgresql" && p.connector != "mysql" {
		p.fail = failAt("source.connector", "connector %q: the converter reads the postgresql and mysql connectors' envelopes", p.connector)
		return
	}
	if rawString(env.Source.get("table")) == "" {
		p.late = failAt("source.table", "an event without source.table: it cannot be told to belong to the table or not")
		return
	}
	e.table = fullName(env.Source, names)
	e.db, e.snapshot = known(names, env.Source.get("db")), known(names, env.Source.get("snapshot"))
	e.txID = string(bytes.TrimSpace(env.Source.get("txId")))
	e.gtid = rawString(env.Source.get("gtid"))
	if e.initial = env.Op == "r" && e.snapshot != "incremental"; e.initial {
		return // an initial snapshot's row: no place in the commit order
	}
	e.read = env.Op == "r"
	var field, msg string
	if e.pos, field, msg = position(p.connector, env.Source); msg != "" {
		p.late = failAt(field, "%s", msg)
		return
	}
	// the images go on in canonical form: the content's sum is taken of it,
	// and a row's value is written in it (values)
	p.before = appendCanonRow(p.before[:0], env.Before)
	p.after = appendCanonRow(p.after[:0], env.After)
	b := append(append(p.sumBuf[:0], env.Op...), 0)
	b = append(append(b, p.before...), 0)
	b = append(append(b, p.after...), 0)
	p.sumBuf = append(b, e.table...)
	sum := sha256.Sum256(p.sumBuf)
	e.sum = [16]byte(sum[:16])
}

// apply takes a prepared record in the dump's order: what depends on the
// records before it (counts, spools, the connector, the table's and the
// streams' names, the order).
func (c *dbzConverter) apply(file int, p *dbzPrep) *Failure {
	switch {
	case p.fail != nil:
		return p.fail
	case p.skip != "":
		c.skipped[p.skip]++
		if len(p.end) > 0 {
			if _, err := c.ends.put(p.end); err != nil {
				c.spErr = err
				return &Failure{}
			}
		}
		return nil
	case p.note:
		c.notes2 = append(c.notes2, bytes.Clone(p.rec.value)) // rec.value is the reader's buffer
		return nil
	}
	switch {
	case c.connector == "":
		c.connector = p.connector
	case p.connector != c.connector:
		return c.failAt(file, p.rec.line, "source.connector", "connector %q after %q: one recording is one connector's", p.connector, c.connector)
	}
	if p.late != nil {
		return p.late
	}
	e := &p.e
	e.table, e.db, e.snapshot = keep(c.names, e.table), keep(c.names, e.db), keep(c.names, e.snapshot)
	if e.initial {
		c.noteTable(e)
		return nil
	}
	c.file, c.line = file, p.rec.line
	if len(p.schema) > 0 { // one map per distinct schema, not per event
		n, ok := c.schemas[string(p.schema)]
		if !ok {
			c.schemaCols = append(c.schemaCols, jsonColumns(p.schema))
			n = len(c.schemaCols)
			c.schemas[string(p.schema)] = n
		}
		e.schema = n
	}
	topic := p.rec.topic
	if topic == "" {
		topic = "table " + e.table // Debezium writes each table to a topic of its own
	}
	if l := &c.lastStream; l.file != file || l.topic != topic || l.partition != p.rec.partition {
		key := fmt.Sprintf("%d\x00%s\x00%d", file, topic, p.rec.partition)
		s, ok := c.streams[key]
		if !ok {
			s = len(c.streams)
			c.streams[key] = s
		}
		*l = lastStream{file, topic, p.rec.partition, s}
	}
	e.stream = c.lastStream.n
	c.noteTable(e)
	if err := c.place(e, p.before, p.after); err != nil {
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

// envelope decodes a change event's members from the record's top level.
// The row images are kept as they came (the raw members), go with the
// event into the sort by position, and are decoded again when it is
// placed: a decoded image is several times its text. The objects are read
// into st.
func (e *dbzEvent) envelope(top rawMembers, st *rawStore) (err error) {
	env := &e.env
	for i, m := range []struct { // (in envelopeMember's order)
		name string
		to   *rawMembers
		buf  *rawMembers
	}{{"source", &env.Source, &st.source}, {"before", &env.Before, &st.before}, {"after", &env.After, &st.after}} {
		if raw := top.get(m.name); raw != nil {
			if pre := st.pre[i]; len(pre) > 0 && len(pre) == len(raw) && &pre[0] == &raw[0] {
				*m.to = *m.buf // read with the envelope
			} else if *m.to, err = readObject(m.buf, raw); err != nil {
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
// schema.table for PostgreSQL, db.table for MySQL. It and the names it is
// made of are kept once in names.
func fullName(src rawMembers, names map[string]string) string {
	db, schema, table := known(names, src.get("db")), known(names, src.get("schema")), known(names, src.get("table"))
	if schema != "" {
		db = schema
	}
	if db == "" {
		return table
	}
	var buf [64]byte
	return keep(names, append(append(append(buf[:0], db...), '.'), table...))
}

// known is rawString(raw) for a name many events carry, kept in names.
func known(names map[string]string, raw json.RawMessage) string {
	if in, ok := plainString(raw); ok {
		return keep(names, in)
	}
	return rawString(raw)
}

// keep is string(b), the copy in names if there is one: one copy of a name
// many events carry (a few names: the first thousand are kept).
func keep[T string | []byte](names map[string]string, b T) string {
	if s, ok := names[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(names) < 1000 {
		names[s] = s
	}
	return s
}

// matches says whether a table option or collection id (table,
// schema.table, db.table or db.schema.table) names a table of full name
// full in database db.
func matches(name, full, db string) bool {
	bare := full[strings.LastIndexByte(full, '.')+1:]
	if name == full || name == bare {
		return true
	}
	rest, ok := strings.CutPrefix(name, db) // name == db+"."+full, without making it (every event asks)
	return ok && len(rest) == len(full)+1 && rest[0] == '.' && rest[1:] == full
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
