package certify

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// DebeziumOptions say how to read a Debezium recording.
type DebeziumOptions struct {
	Table       string   // the captured table (source.table, optionally schema- or db-qualified); "" = the one table the recording holds
	SignalTable string   // the signalling table; default "debezium_signal"
	Key         []string // the primary-key columns in key order; default ["id"]
	// ChunkBounds, when given, states the last key each closed window's
	// chunk read, one per window in order (JSON null for a window that read
	// nothing), and that the first window is the snapshot's first: the chunk
	// query is pk > previous end AND NOT pk > maximum key, so these and
	// MaxKey are the chunks' domains.
	ChunkBounds []json.RawMessage
	MaxKey      json.RawMessage // the snapshot's maximum key, read in its first window
	// Offsets is the connector's recorded Kafka Connect offsets (optional):
	// their incremental-snapshot context states the maximum key.
	Offsets io.Reader
	// Notifications is the connector's recorded incremental-snapshot
	// notifications (optional): they state each chunk's end, the maximum
	// key and the table scan's completion (debezium_evidence.go).
	Notifications io.Reader
	// JSONColumns are compared as parsed JSON, besides the columns the
	// events' schema types io.debezium.data.Json.
	JSONColumns []string
	// Redelivery is what an event delivered again at a position its topic
	// had passed is: "" or "drop", a duplicate (the Accept then rests on a
	// consumer that applies each source position once); "apply", a stream
	// entry applied again in delivery order, as an upsert sink applies it.
	Redelivery string
	// Dir is where the converter spools the events, sorted by commit
	// order in runs, and the bundle's log while it reads (the system
	// temporary directory if empty); the spool is removed at the end.
	Dir string
	// Mem is the memory budget (Options.Mem): a quarter of it holds the
	// events waiting to be sorted, the rest what a run's reading and the
	// collector need. Zero is MinMem.
	Mem int64
	// Progress, if positive, is the least interval between OnProgress
	// calls: the stage ("reading", "placing") and the records read or
	// events placed so far.
	Progress   time.Duration
	OnProgress func(stage string, n int64)
	// Stop, once closed, stops the conversion at its next batch of
	// records: the error is ErrStopped, the spool removed.
	Stop <-chan struct{}
}

// dbzSortLimit, when set, is the converter's sort buffer instead of a
// quarter of the budget: tests set it small to make every recording sort in
// many runs.
var dbzSortLimit int

// Placeholder is what Debezium writes for a column it did not read
// (unavailable.value.placeholder's default), e.g. an unchanged TOASTed value.
const Placeholder = "__debezium_unavailable_value"

// FromDebezium converts a recording of a Debezium incremental snapshot into
// an evidence bundle (FORMAT.md, "From Debezium"): FromDebeziumFiles on one
// file, returning the notes.
func FromDebezium(r io.Reader, w io.Writer, opt DebeziumOptions) (notes []string, f *Failure, err error) {
	conv, f, err := FromDebeziumFiles([]DebeziumInput{{Name: "the recording", R: r}}, w, opt)
	return conv.Notes, f, err
}

// Conversion is what the converter says beside the bundle: Notes, what it
// left out of the scope or skipped, and Assumes, what an Accept of the
// bundle rests on beyond it.
type Conversion struct {
	Notes, Assumes []string
}

// FromDebeziumFiles converts a recording of a Debezium incremental snapshot
// into an evidence bundle (FORMAT.md, "From Debezium"). The recording is the
// connector's delivered change events, one Kafka record a line in any
// common dump format (readDump), in one file or several (a topic a file,
// say): each topic's records in delivery order, the topics merged by source
// position (order).
//
// The converter infers only what the evidence forces. Order is the
// connector's own commit order (PostgreSQL source.sequence, MySQL binlog
// file, pos and row); an event redelivered at a position already seen (at
// least once, after a restart) is dropped as a duplicate, or with
// Redelivery "apply" delivered again. A chunk covers (previous chunk end,
// its end], where an end is the last key the chunk read (Debezium's query is
// pk > end AND NOT pk > maximum key), not the last row it delivered: the
// window may have discarded rows after it. Where no evidence states an end,
// the keys between two chunks' delivered rows are certified only if no event
// touches them; the keys below the first chunk only if the recording holds
// the snapshot's start, and the keys above the last chunk only if the
// maximum key is known and reached. What is left out is returned as notes.
// Evidence the converter cannot place is an Unsupported failure naming the
// line; err is for reading and writing only.
//
// The converter's memory is bounded by DebeziumOptions.Mem, not by the
// recording: the events are sorted into the order externally, and what the
// checks need of the events read so far is spooled to DebeziumOptions.Dir
// (debezium_order.go); the bundle lists the reads before the log.
func FromDebeziumFiles(ins []DebeziumInput, w io.Writer, opt DebeziumOptions) (conv Conversion, f *Failure, err error) {
	if opt.SignalTable == "" {
		opt.SignalTable = "debezium_signal"
	}
	if len(opt.Key) == 0 {
		opt.Key = []string{"id"}
	}
	c := &dbzConverter{opt: opt, skipped: map[string]int{}, streams: map[string]int{},
		names: map[string]string{}, schemas: map[string]int{}}
	if opt.Redelivery == "apply" {
		c.sink = map[string]string{}
	}
	if c.sp, err = openDbzSpool(opt.Dir); err != nil {
		return conv, nil, err
	}
	defer c.sp.close()
	// the sort's buffer: a quarter of the budget, the rest for the
	// collector's headroom and the read buffers of its runs
	limit := int(max(opt.Mem, MinMem) / 4)
	if dbzSortLimit > 0 {
		limit = dbzSortLimit
	}
	c.events = newExtSort(c.sp.dir, "events", limit)
	c.labels = newExtSort(c.sp.dir, "labels", min(limit, 4<<20))
	c.events.stop, c.labels.stop = opt.Stop, opt.Stop
	defer c.events.remove()
	defer c.labels.remove()
	defer memoryLimit(opt.Mem)()
	for _, name := range []string{"reads", "touched", "ends"} {
		sf, err := c.sp.file(name)
		if err != nil {
			return conv, nil, err
		}
		c.spools = append(c.spools, sf)
	}
	c.reads, c.touched, c.ends = c.spools[0], c.spools[1], c.spools[2]
	defer func() {
		for _, f := range c.spools {
			f.f.Close()
		}
		for _, s := range c.seq {
			if s != nil {
				s.f.Close()
			}
		}
	}()
	for i, in := range ins {
		c.inputs = append(c.inputs, in.Name)
		f, err := c.readDumpParallel(in.R, i, in.Name)
		if c.spErr != nil {
			return conv, nil, fmt.Errorf("certify: writing the spool: %w", c.spErr)
		}
		if f != nil || err != nil {
			return conv, f, err
		}
	}
	if f = c.captured(); f != nil {
		return conv, f, nil
	}
	if c.orderFail != nil {
		return conv, c.orderFail, nil
	}
	if len(c.seq) > 1 {
		if f, err := c.twoTopics(); f != nil || err != nil {
			return conv, f, err
		}
	}
	f, err = c.placeEvents()
	if err = cmpErr(err, c.spErr); err != nil {
		return conv, nil, err
	}
	// a transaction's events not contiguous come before any later failure
	if lf, err := c.labelCheck(); lf != nil || err != nil {
		return conv, lf, err
	}
	if f != nil {
		return conv, f, nil
	}
	c.events.remove()
	c.line = 0
	var inStream io.Reader
	if len(c.notes2) > 0 {
		inStream = bytes.NewReader(append(bytes.Join(c.notes2, []byte("\n")), '\n'))
	}
	for _, ev := range []struct {
		r    io.Reader
		read func(io.Reader) (*Failure, error)
	}{{opt.Offsets, c.offsets}, {opt.Notifications, c.notifications}, {inStream, c.notifications}} {
		if ev.r != nil {
			if f, err := ev.read(ev.r); f != nil || err != nil {
				return conv, f, err
			}
		}
	}
	h, f := c.plan()
	if f != nil {
		return conv, f, nil
	}
	c.closure()
	for _, what := range slices.Sorted(maps.Keys(c.skipped)) {
		c.notes = append(c.notes, fmt.Sprintf("%d %s skipped: they change no row", c.skipped[what], what))
	}
	return Conversion{Notes: c.notes, Assumes: c.assumes}, nil, c.write(w, h)
}

// captured names the captured table: --table by its full name (schema.table
// or db.table) or its own name if that names one table, else the one table
// the recording holds besides the signalling table (noteTable lists them as
// they are read); and skips the rows of initial snapshots, which have no
// place in the commit order.
func (c *dbzConverter) captured() *Failure {
	names := c.named
	switch {
	case len(names) > 1 && c.opt.Table != "":
		return unsupported("table", "--table %s names tables %s: give the full name", c.opt.Table, strings.Join(names, " and "))
	case len(names) > 1:
		return unsupported("source.table", "events of tables %s: name the captured table with --table%s", strings.Join(names, " and "), c.signalHint(names))
	case len(names) == 1:
		c.table = names[0]
	}
	c.ours = c.table
	for _, t := range c.initials {
		switch {
		case t.signal:
			c.skipped["rows of the signalling table's initial snapshot"] += t.initial
		case t.name != c.table || c.table == "":
			c.skipped["rows of other tables' initial snapshots"] += t.initial
		default:
			return c.failAt(t.file, t.line, "source.snapshot", "a snapshot read of kind %q: only incremental-snapshot chunks have watermark brackets", t.snapshot)
		}
	}
	return nil
}

// signalHint points at --signal-table when the recording holds the table
// Debezium's signalling documentation names.
func (c *dbzConverter) signalHint(names []string) string {
	for _, n := range names {
		if strings.HasSuffix("."+n, ".debezium_signals") && c.opt.SignalTable == "debezium_signal" {
			return fmt.Sprintf(" (is %s the signalling table? --signal-table %s)", n, n)
		}
	}
	return ""
}

// lastStream names the stream of the last event read, which the next one
// is most often on.
type lastStream struct {
	file      int
	topic     string
	partition int
	n         int
}

type dbzEnvelope struct {
	Transaction *struct {
		ID string `json:"id"`
	} `json:"transaction"`
	Op     string     `json:"op"`
	Before rawMembers // nil: null or missing
	After  rawMembers
	Source rawMembers
}

// rawStore is the storage rawObject reads an event's objects into, reused
// from one event to the next: what is read there aliases the record being
// read and lives no longer than it.
type rawStore struct {
	top, source, before, after rawMembers
	pre                        [3]json.RawMessage // the values read into source, before and after by readEnvelope
}

// member is the storage of envelopeMember i.
func (st *rawStore) member(i int) *rawMembers {
	return [...]*rawMembers{&st.source, &st.before, &st.after}[i]
}

// dbzPos is a change event's place in the connector's commit order:
// PostgreSQL (last commit LSN, LSN, 0), MySQL (binlog file index, pos, row).
type dbzPos [3]uint64

func (a dbzPos) less(b dbzPos) bool { return slices.Compare(a[:], b[:]) < 0 }

// dkey is a bundle key: an integer (one integer column) or a string (a
// string column, or a composite key in an order-preserving encoding).
type dkey struct {
	i int64
	s string
}

type dbzChunk struct {
	id     string
	lo, hi int64  // bundle positions of the open and close watermarks
	at     dbzPos // the close's source position, which its rows carry
	closed bool
	// the rows delivered at the close, in the chunk's read order: how
	// many, the first and last keys, where the first is in the reads spool
	nrows       int
	first, last dkey
	rowsAt      int64
	end         *dkey // the last key the chunk read, as --chunk-bounds states it
	stated      *dkey // the same, as the notifications state it
	noRead      bool  // --chunk-bounds states the chunk read nothing
	completes   bool  // the notifications say the table scan completed in this window
}

// out writes an emitted entry's line: key, value and tag.
func (c *dbzConverter) out(k, v string, tag int64) {
	b := append(append(append(c.lineBuf[:0], `{"out":`...), k...), `,"v":`...)
	b = strconv.AppendInt(append(append(b, v...), `,"tag":`...), tag, 10)
	c.lineBuf = append(b, "}\n"...)
	c.sp.write(c.lineBuf)
}

// tick counts a record of a stage and calls OnProgress when the interval
// has passed (the clock is read every 4096 records).
func (c *dbzConverter) tick(stage string) {
	if stage != c.stage {
		c.stage, c.done = stage, 0
	}
	if c.done++; c.done%4096 != 0 || c.opt.OnProgress == nil || c.opt.Progress <= 0 {
		return
	}
	if now := time.Now(); now.Sub(c.lastProgress) >= c.opt.Progress {
		if !c.lastProgress.IsZero() {
			c.opt.OnProgress(stage, c.done)
		}
		c.lastProgress = now
	}
}

// touch spools a key some log event writes (plan's untouched).
func (c *dbzConverter) touch(k dkey) {
	if _, err := c.touched.put(appendKey(c.keyBuf[:0], k)); err != nil {
		c.spErr = err
	}
}

type dbzConverter struct {
	opt     DebeziumOptions
	inputs  []string // the files' names
	file    int
	line    int
	notes   []string
	assumes []string
	spErr   error
	sp      *dbzSpool // the bundle lines of the log, interleaved with delivered entries
	// the events in the sort by commit order (debezium_order.go), each
	// stream's placed positions, and the first position going back
	events     *extSort
	seq        []*dbzStream // by stream number (streams)
	orderFail  *Failure
	keyBuf     []byte
	payBuf     []byte
	lineBuf    []byte
	names      map[string]string // interned table and source names
	schemas    map[string]int    // each distinct schema's number
	schemaCols []map[string]bool // and its JSON columns
	// spooled: the chunks' rows (chunk, key, value), the keys the log
	// writes, the transaction metadata's END counts (label, count)
	spools               []*spoolFile
	reads, touched, ends *spoolFile
	named                []string    // the tables --table may name, besides the signalling table
	initials             []*dbzTable // the tables with initial-snapshot rows
	pos                  int64
	connector            string
	table                string // the captured table's full name
	ours                 string // the same, as captured names it from the events (a signal may name it later)
	streams              map[string]int
	lastStream           lastStream // the stream of the last event read
	stage                string     // progress: the stage, its records so far, the last call
	done                 int64
	lastProgress         time.Time
	tables               []string       // every table the recording names
	skipped              map[string]int // records that change no row, by kind
	notes2               [][]byte       // notifications found among the events
	dups                 int
	// transactions: the runs of one label so far (labels: each run's
	// start, for labelCheck), the last label and its events, whether some
	// event has no label
	labels    *extSort
	txRuns    int
	lastTx    string
	txEvents  int
	unlabeled bool
	dropped   int               // redelivered rows of the table dropped (Redelivery "drop")
	applied   int               // redeliveries delivered again (Redelivery "apply")
	sink      map[string]string // each key's last delivered value, kept for Redelivery "apply" only
	chunks    []*dbzChunk
	start     bool // the recording holds the snapshot's start (execute-snapshot)
	stopped   int  // line of a stop-snapshot signal
	integer   bool
	kinded    bool
	lastRead  *dkey
	colInt    []bool // per key column: integer (else string)
	// the watermarking strategy: windows close by a close row
	// (insert_insert) or by deleting the open row (insert_delete)
	closeRows, closeDeletes bool
	maxKey                  *dkey // the snapshot's maximum key, as evidence states it
	empty                   bool  // the evidence says the table was empty when the snapshot began
}

func (c *dbzConverter) fail(field, format string, a ...any) *Failure {
	return c.failAt(c.file, c.line, field, format, a...)
}

// record places one event of the merged order.
func (c *dbzConverter) record(e *dbzEvent) *Failure {
	switch {
	case e.redelivery:
		return c.redelivered(e)
	case e.signal:
		return c.signal(e)
	case e.read:
		return c.read(e)
	case !e.ours:
		c.logEvent(e, "")
		return nil
	}
	switch e.env.Op {
	case "c", "u", "d":
	default:
		return c.fail("op", "operation %q is not a row change (c, u, d) or an incremental-snapshot read (r)", e.env.Op)
	}
	k, v, f := c.image(e)
	if f != nil {
		return f
	}
	kj := c.keyJSON(k)
	c.logEvent(e, `,"k":`+kj+`,"v":`+v)
	c.touch(k)
	if c.sink != nil {
		c.sink[kj] = v
	}
	c.out(kj, v, c.pos)
	return nil
}

// image is a row event's key and its post-image in canonical form.
func (c *dbzConverter) image(e *dbzEvent) (dkey, string, *Failure) {
	env := &e.env
	img := env.After
	if env.Op == "d" {
		img = env.Before
		if img == nil {
			return dkey{}, "", c.fail("before", "a delete without a before image: its key is unknown")
		}
	}
	if img == nil {
		return dkey{}, "", c.fail("after", "a %q event without an after image (a delta cannot be replayed)", env.Op)
	}
	if env.Op != "d" {
		if f := c.toast(env.After); f != nil {
			return dkey{}, "", f
		}
	}
	k, f := c.key(img)
	if f != nil {
		return k, "", f
	}
	if env.Op == "u" && env.Before != nil {
		// a key change is a delete and a create; an update that moves a
		// key would leave the old key's row behind
		if old, f := c.key(env.Before); f == nil && c.cmp(old, k) != 0 {
			return k, "", c.fail("before", "an update that changes the key from %s to %s", c.keyJSON(old), c.keyJSON(k))
		}
	}
	if env.Op == "d" {
		return k, "null", nil
	}
	v, f := c.values(e)
	return k, v, f
}

// redelivered takes an event delivered again at a position its topic had
// passed (at least once, after a restart). By default it is dropped, and
// an Accept rests on a consumer that applies each source position once;
// with Redelivery "apply" a row event is delivered again where it came,
// as an upsert sink applies it: one that changes the key's delivered value
// is a stream entry the discipline never emits, which the verifier rejects.
func (c *dbzConverter) redelivered(e *dbzEvent) *Failure {
	if !e.ours {
		c.dups++
		return nil // no row of the table: applying it again changes none
	}
	if c.opt.Redelivery != "apply" {
		c.dups++
		c.dropped++
		return nil
	}
	k, v, f := c.image(e)
	if f != nil {
		return f
	}
	kj := c.keyJSON(k)
	if c.sink[kj] == v {
		c.dups++ // applying it again changes nothing
		return nil
	}
	c.applied++
	c.sink[kj] = v
	c.out(kj, v, c.pos)
	return nil
}

// read takes an incremental-snapshot row: delivered at its window's close,
// carrying the close's source position (order places it after the close).
func (c *dbzConverter) read(e *dbzEvent) *Failure {
	env := &e.env
	if !e.ours {
		return c.fail("source.table", "an incremental-snapshot row of another table: the windows of a snapshot of several tables cannot be told apart")
	}
	n := len(c.chunks)
	if n == 0 || !c.chunks[n-1].closed || c.pos != c.chunks[n-1].hi || c.chunks[n-1].at != e.pos {
		return c.fail("op", "an incremental-snapshot row at source position %v, where no window closes: Debezium sends a window's rows at its close", e.pos)
	}
	if env.After == nil {
		return c.fail("after", "a snapshot row without an after image")
	}
	if f := c.toast(env.After); f != nil {
		return f
	}
	k, f := c.key(env.After)
	if f != nil {
		return f
	}
	if c.lastRead != nil && c.cmp(k, *c.lastRead) <= 0 {
		return c.fail("key", "snapshot row %s after %s: the rows do not come in the bundle's key order (a collation other than byte order, or a chunk read twice after a restart)", c.keyJSON(k), c.keyJSON(*c.lastRead))
	}
	c.lastRead = &k
	ch := c.chunks[n-1]
	v, f := c.values(e)
	if f != nil {
		return f
	}
	if ch.nrows == 0 {
		ch.first, ch.rowsAt = k, c.reads.n
	}
	ch.last = k
	ch.nrows++
	if _, err := c.reads.put(appendStr(appendKey(binary.AppendUvarint(c.keyBuf[:0], uint64(n-1)), k), v)); err != nil {
		c.spErr = err
	}
	if c.sink != nil {
		c.sink[c.keyJSON(k)] = v
	}
	c.out(c.keyJSON(k), v, ch.hi)
	return nil
}

// position reads the connector's commit order from source: msg says why
// it cannot, of field.
func position(connector string, src rawMembers) (p dbzPos, field, msg string) {
	switch connector {
	case "postgresql":
		// sequence is ["<last commit LSN>", "<LSN>"]: the first orders
		// transactions by commit, the second changes within one (lsn alone
		// is per change and not in commit order across transactions).
		if p, ok := lsnRaw(src.get("sequence")); ok {
			return p, "", ""
		}
		seq := rawString(src.get("sequence"))
		pair, ok := lsnPair(seq)
		if !ok {
			return p, "source.sequence", "a postgresql event without source.sequence [last commit LSN, LSN]: its commit order is unknown"
		}
		for i, s := range pair {
			if s == nil { // no commit seen yet by the connector
				continue
			}
			n, err := strconv.ParseUint(*s, 10, 64)
			if err != nil {
				return p, "source.sequence", fmt.Sprintf("sequence %s is not two decimal LSNs", seq)
			}
			p[i] = n
		}
	case "mysql":
		var file string
		var pos, row *uint64
		json.Unmarshal(src.get("file"), &file)
		json.Unmarshal(src.get("pos"), &pos)
		json.Unmarshal(src.get("row"), &row)
		dot := strings.LastIndexByte(file, '.')
		idx, err := strconv.ParseUint(file[dot+1:], 10, 64)
		if file == "" || dot < 0 || err != nil || pos == nil {
			return p, "source.file", "a mysql event without binlog file (name.NNNNNN) and pos: its commit order is unknown (a GTID alone does not order the events of one transaction)"
		}
		p[0], p[1] = idx, *pos
		if row != nil {
			p[2] = *row
		}
	}
	return p, "", ""
}

// lsnRaw reads a PostgreSQL sequence token in the form the connector
// writes, "[\"<LSN>\",\"<LSN>\"]" with the first possibly null, without
// decoding the string; ok is false for any other form (lsnPair's).
func lsnRaw(raw []byte) (p dbzPos, ok bool) {
	rest, ok := bytes.CutPrefix(raw, []byte(`"[`))
	if !ok {
		return p, false
	}
	lsn := func(i int) bool {
		rest, ok = bytes.CutPrefix(rest, []byte(`\"`))
		if !ok {
			return false
		}
		n := 0
		for ; n < len(rest) && n < 19 && '0' <= rest[n] && rest[n] <= '9'; n++ {
			p[i] = p[i]*10 + uint64(rest[n]-'0')
		}
		rest, ok = bytes.CutPrefix(rest[n:], []byte(`\"`))
		return n > 0 && ok
	}
	if r, null := bytes.CutPrefix(rest, []byte("null")); null {
		rest = r
	} else if !lsn(0) {
		return p, false
	}
	rest, ok = bytes.CutPrefix(rest, []byte(","))
	return p, ok && lsn(1) && string(rest) == `]"`
}

// lsnPair reads a PostgreSQL sequence, ["<LSN>","<LSN>"] with the first
// possibly null, as json.Unmarshal into []*string does: ok is false unless
// it is two members, the second not null.
func lsnPair(seq string) (pair []*string, ok bool) {
	if inner, ok := strings.CutPrefix(seq, `["`); ok {
		if inner, ok = strings.CutSuffix(inner, `"]`); ok {
			if a, b, found := strings.Cut(inner, `","`); found && !strings.ContainsFunc(a+b, func(r rune) bool { return r == '"' || r == '\\' || r < 0x20 }) {
				return []*string{&a, &b}, true
			}
		}
	}
	if json.Unmarshal([]byte(seq), &pair) != nil || len(pair) != 2 || pair[1] == nil {
		return nil, false
	}
	return pair, true
}

// label is the event's transaction label for the bundle's x: its
// transaction — the envelope's transaction.id (transaction metadata on),
// else PostgreSQL's source.txId or MySQL's source.gtid — numbered in order
// of appearance. A transaction's events are contiguous in commit order: one
// that comes back after another's is Unsupported.
func (c *dbzConverter) label(e *dbzEvent) (x int, labelled bool) {
	id := ""
	switch {
	case e.env.Transaction != nil && e.env.Transaction.ID != "":
		id = e.env.Transaction.ID
	case c.connector == "postgresql" && e.txID != "null":
		id = e.txID
	case c.connector == "mysql":
		id = e.gtid
	}
	if id == "" {
		c.unlabeled = true
		return 0, false
	}
	if id != c.lastTx { // a new transaction, unless labelCheck finds it came back
		c.txRuns++
		c.labelRun(id)
		c.lastTx, c.txEvents = id, 0
	}
	c.txEvents++
	return c.txRuns, true
}

// closure says what the frontier's transaction closure rests on. With
// every event labelled, the frontier (the recording's last event) ends a
// transaction if the transaction metadata's END record counts as many
// events as the recording delivered of it; else the Accept rests on it.
// Without labels the verifier says so itself.
func (c *dbzConverter) closure() {
	if c.unlabeled || c.lastTx == "" {
		return
	}
	n := -1 // the last END record's count of the last label
	err := c.ends.each(0, func(rec []byte) bool {
		r := payloadReader{rec}
		if id := r.bytes(); string(id) == c.lastTx {
			n = int(r.uint())
		}
		return true
	})
	if err == nil && n == c.txEvents {
		return
	}
	c.assumes = append(c.assumes, fmt.Sprintf("a row-event cut unless the recording's last transaction (%s) is whole: no transaction metadata END record counts its %d events", c.lastTx, c.txEvents))
}

// logEvent writes the next log position, with its transaction label where
// the event carries one (labels).
func (c *dbzConverter) logEvent(e *dbzEvent, row string) {
	x, labelled := c.label(e)
	c.pos++
	b := append(strconv.AppendInt(append(c.lineBuf[:0], `{"p":`...), c.pos, 10), row...)
	if labelled {
		b = strconv.AppendInt(append(b, `,"x":`...), int64(x), 10)
	}
	c.lineBuf = append(b, "}\n"...)
	c.sp.write(c.lineBuf)
}

// signal reads a row of the signalling table: window watermarks (insert or
// insert_delete strategy), execute-snapshot and stop-snapshot.
func (c *dbzConverter) signal(e *dbzEvent) *Failure {
	env := &e.env
	c.logEvent(e, "")
	row := env.After
	if env.Op == "d" {
		row = env.Before
	}
	var id, typ, data string
	json.Unmarshal(row.get("id"), &id)
	json.Unmarshal(row.get("type"), &typ)
	json.Unmarshal(row.get("data"), &data)
	var open *dbzChunk
	if k := len(c.chunks); k > 0 && !c.chunks[k-1].closed {
		open = c.chunks[k-1]
	}
	if env.Op == "d" { // insert_delete: the close deletes the open row
		if open != nil && id == open.id+"-open" {
			if c.closeRows {
				return c.fail("snapshot-window-close", "window %q closed by deleting its open row, others by a close row: one watermarking strategy per run", open.id)
			}
			open.hi, open.at, open.closed, c.closeDeletes = c.pos, e.pos, true, true
		}
		return nil
	}
	if env.Op != "c" {
		return nil
	}
	switch typ {
	case "snapshot-window-open":
		if open != nil {
			return c.fail("snapshot-window-open", "window %q opens while window %q is open", id, open.id)
		}
		c.chunks = append(c.chunks, &dbzChunk{id: strings.TrimSuffix(id, "-open"), lo: c.pos})
	case "snapshot-window-close":
		if open == nil || id != open.id+"-close" || c.closeDeletes {
			return c.fail("snapshot-window-close", "window close %q without its open, or after windows closed by deleting their open rows", id)
		}
		open.hi, open.at, open.closed, c.closeRows = c.pos, e.pos, true, true
	case "execute-snapshot", "stop-snapshot":
		var d struct {
			Collections []string          `json:"data-collections"`
			Type        string            `json:"type"`
			Conditions  []json.RawMessage `json:"additional-conditions"`
			Surrogate   string            `json:"surrogate-key"`
		}
		if data != "" && json.Unmarshal([]byte(data), &d) != nil {
			return c.fail("data", "%s signal data %q is not JSON", typ, data)
		}
		mine := len(d.Collections) == 0 && typ == "stop-snapshot"
		if c.opt.Table == "" && c.table == "" && len(d.Collections) == 1 && typ == "execute-snapshot" {
			c.table = d.Collections[0] // no event of any table: the snapshot's
		}
		for _, col := range d.Collections {
			if c.collection(col) {
				mine = true
			} else if typ == "execute-snapshot" {
				return c.fail("data-collections", "a snapshot of %q besides the table: the windows of several tables cannot be told apart", col)
			}
		}
		switch {
		case !mine:
		case typ == "stop-snapshot":
			c.stopped = c.line
		case d.Type != "" && !strings.EqualFold(d.Type, "incremental"):
			return c.fail("type", "a %s snapshot: only incremental snapshots have watermark brackets", d.Type)
		case len(d.Conditions) > 0 || d.Surrogate != "":
			return c.fail("additional-conditions", "a snapshot with additional conditions or a surrogate key does not read the table's key ranges whole")
		case len(c.chunks) > 0:
			return c.fail("execute-snapshot", "a second snapshot of the table in one recording")
		default:
			c.start = true
		}
	}
	return nil
}

func jsonString(s string) json.RawMessage { b, _ := json.Marshal(s); return b }

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// placeholders is Debezium's unavailable-value placeholder, as text and as
// bytes (base64).
var placeholders = [][]byte{[]byte(Placeholder), []byte("X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==")}

// toast: a placeholder for a value the connector did not read (an unchanged
// TOASTed column) is not a full image (S-IMG): the row cannot be replayed.
func (c *dbzConverter) toast(row rawMembers) *Failure {
	// (a row read back from the sort: in name order, no repeated names)
	for _, m := range row {
		if raw := m.value; bytes.Contains(raw, placeholders[0]) || bytes.Contains(raw, placeholders[1]) {
			col := string(m.name)
			return c.fail("after."+col, "column %q holds Debezium's unavailable-value placeholder (an unread TOAST value): the after image is not a full row image (S-IMG)", col)
		}
	}
	return nil
}

// key returns the row's primary key.
func (c *dbzConverter) key(row rawMembers) (dkey, *Failure) {
	var buf [4]json.RawMessage
	parts := buf[:0]
	for _, col := range c.opt.Key {
		raw := row.get(col)
		if raw == nil {
			return dkey{}, c.fail(col, "the row has no key column %q", col)
		}
		parts = append(parts, raw)
	}
	return c.keyOf(parts)
}

// keyOf makes a bundle key of the key columns' values. One integer column
// is an integer key; one string column a string key; several columns a
// string in which each integer is 20 fixed-width digits (offset by 2^63) and
// each string is terminated by NUL (NUL and \x01 escaped), so that byte order
// is the columns' lexicographic order.
func (c *dbzConverter) keyOf(parts []json.RawMessage) (dkey, *Failure) {
	var b []byte
	integer := len(parts) == 1
	var k dkey
	var kbuf [4]bool
	kinds := kbuf[:0]
	for _, raw := range parts {
		raw = bytes.TrimSpace(raw)
		isInt := !(len(raw) > 0 && raw[0] == '"')
		kinds = append(kinds, isInt)
		if !isInt {
			var s string
			if json.Unmarshal(raw, &s) != nil || strings.ContainsRune(s, utf8.RuneError) {
				return k, c.fail("key", "key column value %s is not valid Unicode text", raw)
			}
			integer = false
			if len(parts) == 1 {
				k.s = s
				break
			}
			s = strings.NewReplacer("\x01", "\x01\x02", "\x00", "\x01\x01").Replace(s)
			b = append(append(b, s...), 0)
			continue
		}
		n, err := parseInt(raw)
		if err != nil {
			return k, c.fail("key", "key column value %s is neither an integer nor a string", raw)
		}
		k.i = n
		if len(parts) > 1 {
			var d [20]byte // %020d
			for i, u := 19, uint64(n)^1<<63; i >= 0; i, u = i-1, u/10 {
				d[i] = '0' + byte(u%10)
			}
			b = append(b, d[:]...)
		}
	}
	if len(parts) > 1 {
		k.s = string(b)
	}
	if !c.kinded {
		c.integer, c.kinded, c.colInt = integer, true, slices.Clone(kinds)
	} else if integer != c.integer || !slices.Equal(kinds, c.colInt) {
		return k, c.fail("key", "key %s: a key column mixes strings and numbers", strings.Trim(string(mustJSON(parts)), "[]"))
	}
	return k, nil
}

func (c *dbzConverter) cmp(a, b dkey) int {
	if c.integer {
		return cmp.Compare(a.i, b.i)
	}
	return strings.Compare(a.s, b.s)
}

func (c *dbzConverter) keyJSON(k dkey) string {
	if c.integer {
		return strconv.FormatInt(k.i, 10)
	}
	return string(jsonString(k.s))
}

// values is an after image in canonical form (canonRow), where a column
// Debezium renders in more than one way holds one rendering: an
// io.debezium.data.Json column (typed so by the schema, or named by
// JSONColumns) holds its JSON text parsed and written compactly with
// members in name order — MySQL renders {"a": 2} in a snapshot read and
// {"a":2} from the binlog.
func (c *dbzConverter) values(e *dbzEvent) (string, *Failure) {
	row := e.env.After
	if len(e.jsonCols) == 0 && len(c.opt.JSONColumns) == 0 {
		return string(e.after), nil // the image as it was put in the sort: canonical
	}
	out := make(rawMembers, 0, len(row))
	for _, m := range row { // (read back from the sort: no repeated names)
		if col := string(m.name); e.jsonCols[col] || slices.Contains(c.opt.JSONColumns, col) {
			cj, err := canonJSONText(m.value)
			if err != nil {
				return "", c.fail("after."+col, "column %q, JSON by its type, holds %s: %v", col, m.value, err)
			}
			m.value = cj
		}
		out = append(out, m)
	}
	return canonRow(out), nil
}

// canonJSONText is a JSON string holding JSON text (or null), with the text
// in one form: compact, object members in name order, numbers as written.
func canonJSONText(raw json.RawMessage) (json.RawMessage, error) {
	var s *string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("not a string")
	}
	if s == nil {
		return raw, nil
	}
	d := json.NewDecoder(strings.NewReader(*s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("text after the JSON value")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonString(string(b)), nil
}

// canonRow is a row image with its columns in name order.
func canonRow(row rawMembers) string { return string(appendCanonRow(nil, row)) }

// appendCanonRow appends canonRow(row).
func appendCanonRow(b []byte, row rawMembers) []byte {
	if row == nil {
		return append(b, "null"...)
	}
	return appendCanonJSON(b, row) // json.Marshal's: keys sorted, raw values compacted
}

// plan turns the windows into units. A chunk's domain is (previous end, end]
// where evidence states the ends; elsewhere only what the delivered rows and
// the untouched keys force (see FromDebezium).
func (c *dbzConverter) plan() (*Header, *Failure) {
	var closed []*dbzChunk
	for _, ch := range c.chunks {
		if ch.closed {
			closed = append(closed, ch)
		} else {
			c.notes = append(c.notes, fmt.Sprintf("window %q never closes: the recording is cut off inside it, its chunk is not certified", ch.id))
		}
	}
	if len(closed) == 0 {
		return nil, unsupported("snapshot-window-open", "the recording holds no closed incremental-snapshot window: no key's value is observed, so no cut can be certified%s", c.signalHint(c.tables))
	}
	if c.empty && c.start && c.lastRead == nil {
		// an empty table: every key observed absent in the first window
		lo, hi := closed[0].lo, closed[0].hi
		all := ScopeSpec{Ranges: []RangeSpec{{}}}
		h := &Header{Format: Format, Version: Version, Coordinates: "position", Keys: "integer", Base: "from-reads",
			Discipline: WindowDiscard, Reads: "survivors",
			Certificate: Certificate{Scope: all, Frontier: c.pos},
			Run:         Run{Scope: all, Start: 0, Consumed: c.pos},
			Units:       []UnitSpec{{Domain: all, Lo: &lo, Hi: &hi}},
		}
		if c.kinded && !c.integer {
			h.Keys = "string"
		}
		return h, nil
	}
	if c.opt.ChunkBounds != nil {
		if len(c.opt.ChunkBounds) != len(closed) {
			return nil, unsupported("chunk-bounds", "%d chunk bounds for %d closed windows", len(c.opt.ChunkBounds), len(closed))
		}
		for i, raw := range c.opt.ChunkBounds {
			if string(bytes.TrimSpace(raw)) == "null" {
				closed[i].noRead = true
				continue
			}
			k, f := c.boundKey(raw, "chunk-bounds")
			if f != nil {
				return nil, f
			}
			closed[i].end = &k
		}
		c.start = true
	}
	if c.opt.MaxKey != nil {
		k, f := c.boundKey(c.opt.MaxKey, "max-key")
		if f != nil {
			return nil, f
		}
		if f := c.stateMax(k, "max-key"); f != nil {
			return nil, f
		}
	}
	maxKey := c.maxKey
	for _, ch := range closed {
		switch {
		case ch.stated == nil:
		case ch.end != nil && c.cmp(*ch.end, *ch.stated) != 0 || ch.noRead:
			return nil, unsupported("chunk-bounds", "window %q: --chunk-bounds and the notifications state different chunk ends", ch.id)
		default:
			ch.end = ch.stated
		}
		if ch.completes && maxKey != nil && ch.end == nil {
			// the read above the last end returned nothing: the
			// window observed (last end, maximum key] empty.
			ch.end = maxKey
		}
	}
	if c.dups > 0 {
		c.notes = append(c.notes, fmt.Sprintf("%d redelivered events (a source position and content already delivered) were taken as duplicates, not as newer writes", c.dups))
	}
	if c.dropped > 0 {
		c.assumes = append(c.assumes, fmt.Sprintf("a consumer that applies each source position once: %d redelivered events of the table were dropped", c.dropped))
	}
	if c.applied > 0 {
		c.notes = append(c.notes, fmt.Sprintf("%d redelivered events were applied again where they were delivered", c.applied))
	}
	h := &Header{Format: Format, Version: Version, Coordinates: "position", Keys: "string", Base: "from-reads",
		Discipline: WindowDiscard, Reads: "survivors",
		Certificate: Certificate{Frontier: c.pos},
		Run:         Run{Start: 0, Consumed: c.pos},
	}
	if c.integer {
		h.Keys = "integer"
	}
	// low is where the next domain starts: after *low (exclusive) when
	// known, below everything when start and low == nil.
	var low *dkey
	var known bool
	var scope []RangeSpec
	add := func(ch *dbzChunk, r RangeSpec) {
		lo, hi := ch.lo, ch.hi
		h.Units = append(h.Units, UnitSpec{Domain: ScopeSpec{Ranges: []RangeSpec{r}}, Lo: &lo, Hi: &hi})
		scope = append(scope, r)
	}
	// untouched says no log event writes a key strictly between a and b
	// (nil = unbounded): such keys are absent throughout, since a present
	// one would have been delivered by the chunk that read it. The domains
	// are laid out twice when it is asked: first to learn the questions,
	// then with the answers from one read of the keys the log writes.
	var asked [][2]*dkey
	var answers []bool
	untouched := func(a, b *dkey) bool {
		if answers == nil {
			asked = append(asked, [2]*dkey{a, b})
			return false
		}
		r := answers[0]
		answers = answers[1:]
		return r
	}
	lay := func() *Failure {
		low, known = nil, c.start
		for i, ch := range closed {
			if ch.nrows > 0 {
				// the rows ascend: the first is the lowest, and the
				// first above the end is the first out of bounds
				k, out := ch.first, known && low != nil && c.cmp(ch.first, *low) <= 0
				if !out && ch.end != nil && c.cmp(ch.last, *ch.end) > 0 {
					k, out = c.firstAbove(ch, *ch.end), true
				}
				if out {
					return unsupported("chunk-bounds", "window %q delivered key %s outside the chunk bounds stated for it", ch.id, c.keyJSON(k))
				}
			}
			if ch.nrows == 0 && ch.end != nil && known && low != nil && c.cmp(*ch.end, *low) == 0 {
				continue // the scan completed at the last chunk's end
			}
			if ch.end != nil && known && low != nil && c.cmp(*ch.end, *low) <= 0 {
				return unsupported("chunk-bounds", "the chunk end %s of window %q is not above the previous end %s", c.keyJSON(*ch.end), ch.id, c.keyJSON(*low))
			}
			if ch.nrows == 0 && ch.end == nil {
				// an empty window with no stated end: a retried chunk (the
				// chunk end does not move), a finished table or a failed read;
				// only the first is followed by another window. Or a chunk
				// whose rows the window's events all discarded: the end moved
				// to a key the events do not show, so the next window's lower
				// bound is unknown.
				if i+1 < len(closed) {
					known = false
				}
				continue
			}
			var r RangeSpec
			first := ch.end
			if ch.nrows > 0 {
				first = &ch.first
			}
			switch {
			case known && low == nil:
			case known:
				r.Gt = json.RawMessage(c.keyJSON(*low))
			case (low != nil || c.start) && c.dups == 0 && untouched(low, first):
				// (not after a restart: a chunk whose rows were lost with it
				// would look like a gap)
				if low != nil {
					r.Gt = json.RawMessage(c.keyJSON(*low))
				}
			default:
				r.Ge = json.RawMessage(c.keyJSON(*first))
				switch {
				case low != nil:
					c.notes = append(c.notes, fmt.Sprintf("keys strictly between %s and %s are not certified: events touch them and no evidence states which chunk read them", c.keyJSON(*low), c.keyJSON(*first)))
				case !c.start:
					c.notes = append(c.notes, fmt.Sprintf("keys below %s are not certified: the recording does not hold the snapshot's start (its execute-snapshot signal)", c.keyJSON(*first)))
				default:
					c.notes = append(c.notes, fmt.Sprintf("keys below %s are not certified: events touch them, an earlier window delivered no row, and no evidence states which chunk read them", c.keyJSON(*first)))
				}
			}
			end := ch.end
			if end == nil {
				end = &ch.last
			}
			r.Le = json.RawMessage(c.keyJSON(*end))
			add(ch, r)
			low, known = end, ch.end != nil
		}
		return nil
	}
	notes := len(c.notes)
	if f := lay(); f != nil {
		return nil, f
	}
	if len(asked) > 0 {
		var err error
		if answers, err = c.untouchedAnswers(asked); err != nil {
			c.spErr = err
			return nil, &Failure{}
		}
		h.Units, scope, c.notes = nil, nil, c.notes[:notes]
		if f := lay(); f != nil {
			return nil, f
		}
	}
	if low == nil {
		return nil, unsupported("snapshot-window-open", "no window delivered a row or has a stated chunk end: no chunk's domain is determined")
	}
	switch {
	case maxKey == nil:
		c.notes = append(c.notes, fmt.Sprintf("keys above %s are not certified: no evidence states the table's maximum key", c.keyJSON(*low)))
	case !c.start:
		c.notes = append(c.notes, fmt.Sprintf("keys above %s are not certified: the recording does not hold the snapshot's first window, where the maximum key was read", c.keyJSON(*low)))
	case c.cmp(*low, *maxKey) > 0:
		return nil, unsupported("max-key", "the maximum key %s is below the chunk end %s", c.keyJSON(*maxKey), c.keyJSON(*low))
	default:
		if c.cmp(*low, *maxKey) < 0 {
			why := "no evidence states that a chunk read them"
			if known {
				why = "the snapshot did not reach them"
			}
			c.notes = append(c.notes, fmt.Sprintf("keys above %s up to the maximum key %s are not certified: %s", c.keyJSON(*low), c.keyJSON(*maxKey), why))
		}
		// The maximum-key query ran in the first window: no key above it
		// existed then.
		add(closed[0], RangeSpec{Gt: json.RawMessage(c.keyJSON(*maxKey))})
	}
	if c.stopped > 0 {
		c.notes = append(c.notes, fmt.Sprintf("a stop-snapshot signal (line %d) stopped the snapshot", c.stopped))
	}
	h.Certificate.Scope = ScopeSpec{Ranges: scope}
	h.Run.Scope = h.Certificate.Scope
	return h, nil
}

// boundKey reads a stated key: a JSON value for one key column, a JSON
// array of the columns' values for several.
func (c *dbzConverter) boundKey(raw json.RawMessage, field string) (dkey, *Failure) {
	parts := []json.RawMessage{raw}
	if len(c.opt.Key) > 1 {
		parts = nil
		if json.Unmarshal(raw, &parts) != nil || len(parts) != len(c.opt.Key) {
			return dkey{}, unsupported(field, "key %s is not an array of %d column values", raw, len(c.opt.Key))
		}
	}
	line := c.line
	k, f := c.keyOf(parts)
	c.line = line
	if f != nil {
		f.Field, f.Line = field, 0
	}
	return k, f
}

func (c *dbzConverter) write(w io.Writer, h *Header) error {
	bw := bufio.NewWriter(w)
	head, err := json.Marshal(h)
	if err != nil {
		return err
	}
	bw.Write(head)
	bw.WriteByte('\n')
	units := make([]int, len(c.chunks))
	for i, ch := range c.chunks {
		if ch.closed && ch.nrows > 0 {
			units[i] = c.unitOf(h, ch)
		}
	}
	var err2 error
	err = c.reads.each(0, func(rec []byte) bool {
		r := payloadReader{rec}
		unit := units[r.uint()]
		k := readKey(&r)
		_, err2 = fmt.Fprintf(bw, `{"read":%d,"k":%s,"v":%s}`+"\n", unit, c.keyJSON(k), r.bytes())
		return err2 == nil
	})
	if err = cmpErr(err, err2); err != nil {
		return err
	}
	if err := c.sp.copyLog(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// unitOf is the 1-based unit of a chunk with rows (the first unit with its
// bracket: the unit above the maximum key comes last).
func (c *dbzConverter) unitOf(h *Header, ch *dbzChunk) int {
	for i, u := range h.Units {
		if *u.Lo == ch.lo && *u.Hi == ch.hi {
			return i + 1
		}
	}
	return 0
}
