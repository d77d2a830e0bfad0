package record

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/cutcheck/cutcheck/certify"
)

// unit is one chunk of the plan: its key range (gt, le] and its bracket.
type unit struct {
	gt     *keyVal
	le     keyVal
	inf    bool // no upper bound: the keys above the maximum key, or all keys of an empty table
	lo, hi int64
	last   bool
	read   bool
}

// capture is the window-discard capture and its recorder: it consumes the
// slot, keeps the log positions, the chunk buffer and the plan, and writes
// the bundle's parts and the events as it goes.
type capture struct {
	s      *session
	tab    *table
	sig    *table
	fault  string
	maxKey keyVal
	empty  bool // the table had no row when the snapshot started

	spool   *spool
	events  *bufio.Writer
	notes   *bufio.Writer // incremental-snapshot notifications (Debezium's sink channel)
	scanned int64         // rows the chunks read, for TABLE_SCAN_COMPLETED

	// the log
	pos        int64
	start      int64 // consumption start s0 (late-start moves it past the first low edge)
	lateStart  bool
	xid        uint32
	commitTime time.Time
	lastCommit pglogrepl.LSN // Debezium's lastCommitLsn: the commit before the current transaction
	acked      pglogrepl.LSN
	nextAck    time.Time
	rels       map[uint32]*table

	// the plan and the chunk in hand
	units   []unit
	cur     int // 1-based index of the chunk whose window is open or pending, 0 for none
	open    bool
	keys    []keyVal
	rows    [][]byte
	alive   []bool
	touched []bool         // a consumed window event had the row's key
	idx     map[string]int // buffered rows by their key's JSON
	pending int            // high-edge-off-by-one: the buffered row the last window event would discard, +1

	stats  Stats
	buf    []byte
	sink   map[string][]byte // schedule runs: the replay of what was emitted
	highAt time.Time         // when the last high watermark was written
	// the last change's LSN, for events emitted between changes
	lastLSN pglogrepl.LSN

	after  bool          // the backfill is done: what is consumed goes to the check only
	check  *oracle       // the table-oracle check (oracle.go); nil for schedule runs
	toast  toastCache    // images to fill unchanged TOASTed columns from (toast.go)
	walAt  time.Time     // when WAL last reached the consumer (stall.go)
	walEnd pglogrepl.LSN // the furthest WAL position the server said it sent
	hiLSN  pglogrepl.LSN // the server's WAL insert position after the last high watermark
	err    error         // a failure writing the check's spool, which emit cannot return
}

// step is what one consumed position was.
type step struct {
	pos    int64
	key    string
	hasKey bool
	open   int // our low watermark of this chunk
	close  int // our high watermark of this chunk
}

func (s *session) startCapture(ctx context.Context) (*capture, error) {
	c := &capture{s: s, tab: s.tab, sig: s.sig, fault: s.opt.Fault, rels: map[uint32]*table{}, idx: map[string]int{}}
	c.lateStart = c.fault == "late-start"
	if s.opt.Schedule == nil {
		c.check = newOracle(s.opt.Spool)
	}
	var err error
	if c.spool, err = newSpool(s.opt.Spool); err != nil {
		return nil, err
	}
	if s.opt.Events != nil {
		c.events = bufio.NewWriterSize(s.opt.Events, 1<<16)
	}
	if s.opt.Notifications != nil {
		c.notes = bufio.NewWriterSize(s.opt.Notifications, 1<<12)
	}
	if err := s.startReplication(ctx); err != nil {
		c.spool.remove()
		return nil, err
	}
	if s.opt.Schedule != nil {
		return c, nil
	}
	// A first look at the maximum key sizes the workload's keys; the
	// snapshot's own is read in its first window.
	if err := c.readMaxKey(ctx); err != nil {
		c.spool.remove()
		return nil, err
	}
	return c, nil
}

// readMaxKey reads the table's maximum key. The snapshot's is fixed in its
// first window, as Debezium reads it: later inserts above it reach the sink
// through the stream only, and the window brackets the read that found no
// key above it.
func (c *capture) readMaxKey(ctx context.Context) error {
	t := c.tab
	var cols []string
	for _, i := range t.key {
		cols = append(cols, quoteIdent(t.cols[i].name))
	}
	rows, err := c.s.sql.Query(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM "+t.qname+" ORDER BY "+t.keyOrder(" DESC")+" LIMIT 1", textFormat)
	if err != nil {
		return c.s.dbErr(ctx, "reading the maximum key", err)
	}
	defer rows.Close()
	c.empty, c.maxKey = true, keyVal{}
	for rows.Next() {
		vals := make([][]byte, len(t.cols))
		for j, i := range t.key {
			vals[i] = rows.RawValues()[j]
		}
		if c.maxKey, err = t.keyOf(vals); err != nil {
			return ioErr("table %s: the maximum key: %v", t.qname, err)
		}
		c.empty = false
	}
	if err := rows.Err(); err != nil {
		return c.s.dbErr(ctx, "reading the maximum key", err)
	}
	c.stats.MaxKey = c.maxKey.json
	return nil
}

// backfill is the incremental snapshot's loop: the execute-snapshot signal,
// then chunk 1; each time a chunk's high watermark is consumed, emit its
// survivors and read the next, until a window's read returns no row (or the
// table was empty), as Debezium's readChunk does.
func (c *capture) backfill(ctx context.Context) error {
	if err := c.executeSnapshot(ctx); err != nil {
		return err
	}
	if f := c.s.opt.inWindow; f != nil {
		if err := f(ctx, 0); err != nil {
			return err
		}
	}
	if err := c.readChunk(ctx, 1); err != nil {
		return err
	}
	for {
		st, err := c.consume(ctx)
		if err != nil {
			return err
		}
		if st.close > 0 {
			u := c.units[st.close-1]
			if u.last {
				return nil
			}
			if err := c.readChunk(ctx, st.close+1); err != nil {
				return err
			}
		}
	}
}

// readChunk writes chunk i's low watermark, reads the chunk into the buffer
// and writes its high watermark, each in its own transaction.
func (c *capture) readChunk(ctx context.Context, i int) error {
	if err := c.writeLow(ctx, i); err != nil {
		return err
	}
	if err := c.awaitVisible(ctx); err != nil {
		return err
	}
	if i == 1 {
		if err := c.readMaxKey(ctx); err != nil {
			return err
		}
	}
	if err := c.selectChunk(ctx, i); err != nil {
		return err
	}
	if f := c.s.opt.inWindow; f != nil {
		if err := f(ctx, i); err != nil {
			return err
		}
	}
	if c.s.opt.WindowHold > 0 {
		select {
		case <-time.After(c.s.opt.WindowHold):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return c.writeHigh(ctx, i)
}

// executeSnapshot writes the execute-snapshot signal row that starts an
// incremental snapshot of the table, in its own transaction.
func (c *capture) executeSnapshot(ctx context.Context) error {
	id := c.s.run + "-execute"
	data, _ := json.Marshal(map[string]any{"data-collections": []string{c.collection()}, "type": "incremental"})
	if _, err := c.s.sql.Exec(ctx, "INSERT INTO "+c.sig.qname+" (id, type, data) VALUES ($1, 'execute-snapshot', $2)", id, string(data)); err != nil {
		return c.s.dbErr(ctx, "writing the execute-snapshot signal", err)
	}
	c.notify(id, "STARTED", map[string]string{"data_collections": c.collection()})
	return nil
}

// collection is the table as Debezium's PostgreSQL connector names it
// (TableId.identifier: schema.table).
func (c *capture) collection() string { return c.tab.schema + "." + c.tab.name }

// notify writes one incremental-snapshot notification as Debezium's sink
// notification channel writes its value (IncrementalSnapshotNotificationService).
func (c *capture) notify(id, typ string, data map[string]string) {
	if c.notes == nil {
		return
	}
	data["connector_name"] = "cutcheck"
	b, _ := json.Marshal(struct {
		ID        string            `json:"id"`
		Aggregate string            `json:"aggregate_type"`
		Type      string            `json:"type"`
		Data      map[string]string `json:"additional_data"`
		Timestamp int64             `json:"timestamp"`
	}{id, "Incremental Snapshot", typ, data, time.Now().UnixMilli()})
	c.notes.Write(append(b, '\n'))
}

func (c *capture) signalID(i int, edge string) string {
	return fmt.Sprintf("%s-%d-%s", c.s.run, i, edge)
}

func (c *capture) writeLow(ctx context.Context, i int) error {
	_, err := c.s.sql.Exec(ctx, "INSERT INTO "+c.sig.qname+" (id, type, data) VALUES ($1, 'snapshot-window-open', $2)",
		c.signalID(i, "open"), fmt.Sprintf(`{"openWindowTimestamp": %d}`, time.Now().UnixMilli()))
	if err != nil {
		return c.s.dbErr(ctx, "writing the low watermark", err)
	}
	return nil
}

func (c *capture) writeHigh(ctx context.Context, i int) error {
	_, err := c.s.sql.Exec(ctx, "INSERT INTO "+c.sig.qname+" (id, type, data) VALUES ($1, 'snapshot-window-close', $2)",
		c.signalID(i, "close"), fmt.Sprintf(`{"closeWindowTimestamp": %d}`, time.Now().UnixMilli()))
	if err != nil {
		return c.s.dbErr(ctx, "writing the high watermark", err)
	}
	c.highAt = time.Now()
	if err := c.s.sql.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&c.hiLSN); err != nil {
		return c.s.dbErr(ctx, "reading the WAL position", err)
	}
	if c.fault == "early-release" {
		c.releaseEarly()
	}
	return nil
}

// releaseEarly is the early-release fault: the buffer is emitted as soon as
// the high watermark is written, before the consumer has processed the
// window's events, so nothing is discarded. The entries are recorded where
// they were emitted, at the position the consumer had reached.
func (c *capture) releaseEarly() {
	for i, k := range c.keys {
		if !c.alive[i] {
			continue
		}
		c.alive[i] = false
		c.stats.Diverged++
		c.stats.Survivors++
		c.emit(k.json, c.rows[i])
		c.event("r", c.tab, nil, c.rows[i], c.lastLSN, "incremental")
	}
}

// selectChunk reads chunk i: pk > last ORDER BY pk LIMIT n, up to the
// maximum key, into the buffer and the bundle's reads.
func (c *capture) selectChunk(ctx context.Context, i int) error {
	if i != len(c.units)+1 {
		return fmt.Errorf("chunk %d read out of order", i)
	}
	u := unit{lo: -1, hi: -1}
	if i > 1 {
		prev := c.units[i-2].le
		u.gt = &prev
	}
	q, args := c.chunkQuery(u.gt, c.maxKey)
	q += " LIMIT " + strconv.Itoa(c.s.opt.ChunkSize)
	id := c.s.run + "-execute"
	if c.empty {
		// The maximum-key query found no row: every key was absent when
		// it ran, in this first window.
		u.inf, u.last, u.read = true, true, true
		c.units = append(c.units, u)
		c.stats.Chunks, c.cur = len(c.units), i
		c.keys, c.rows, c.alive, c.touched = c.keys[:0], c.rows[:0], c.alive[:0], c.touched[:0]
		clear(c.idx)
		c.notify(id, "TABLE_SCAN_COMPLETED", map[string]string{"data_collections": c.collection(), "scanned_collection": c.collection(), "total_rows_scanned": "0", "status": "EMPTY"})
		c.notify(id, "COMPLETED", map[string]string{})
		return nil
	}
	if err := c.fill(ctx, i, q, args); err != nil {
		return err
	}
	n := len(c.keys)
	c.scanned += int64(n)
	if n == 0 {
		// Nothing above the last chunk's end: the table scan is done.
		u.le, u.last = c.maxKey, true
		c.notify(id, "TABLE_SCAN_COMPLETED", map[string]string{"data_collections": c.collection(), "scanned_collection": c.collection(),
			"total_rows_scanned": strconv.FormatInt(c.scanned, 10), "status": "SUCCEEDED"})
		c.notify(id, "COMPLETED", map[string]string{})
	} else {
		u.le = c.keys[n-1]
		c.notify(id, "IN_PROGRESS", map[string]string{"data_collections": c.collection(), "current_collection_in_progress": c.collection(),
			"maximum_key": c.tab.noteKey(c.maxKey), "last_processed_key": c.tab.noteKey(u.le)})
	}
	u.read = true
	c.units = append(c.units, u)
	c.stats.Chunks = len(c.units)
	c.cur = i
	return nil
}

// readUnit reads a planned chunk's whole key range (schedule runs, whose
// chunks are the model's).
func (c *capture) readUnit(ctx context.Context, i int) error {
	u := &c.units[i-1]
	u.read = true
	q, args := c.chunkQuery(u.gt, u.le)
	return c.fill(ctx, i, q, args)
}

// chunkQuery selects the rows of keys in (gt, le] in key order, as text: a
// row comparison on the key columns, COLLATE "C" on collatable ones, so
// the chunks' domains and order are certify's key order.
func (c *capture) chunkQuery(gt *keyVal, le keyVal) (string, []any) {
	t := c.tab
	q := "SELECT " + t.selectList() + " FROM " + t.qname + " WHERE " + t.keyCmp("<=", 1)
	args := []any{textFormat}
	for _, s := range le.text {
		args = append(args, s)
	}
	if gt != nil {
		q += " AND " + t.keyCmp(">", len(t.key)+1)
		for _, s := range gt.text {
			args = append(args, s)
		}
	}
	return q + " ORDER BY " + t.keyOrder(""), args
}

// fill runs chunk i's select into the buffer and the bundle's reads.
func (c *capture) fill(ctx context.Context, i int, q string, args []any) error {
	rows, err := c.s.sql.Query(ctx, q, args...)
	if err != nil {
		return c.s.dbErr(ctx, "reading chunk "+strconv.Itoa(i), err)
	}
	c.keys, c.rows, c.alive, c.touched = c.keys[:0], c.rows[:0], c.alive[:0], c.touched[:0]
	clear(c.idx)
	c.toast.newChunk()
	for rows.Next() {
		vals := rows.RawValues()
		k, err := c.tab.keyOf(vals)
		if err != nil {
			rows.Close()
			return ioErr("table %s: chunk %d: %v", c.tab.qname, i, err)
		}
		img, err := c.tab.image(nil, vals)
		if err != nil {
			rows.Close()
			return ioErr("table %s: %v", c.tab.qname, err)
		}
		c.toast.read(len(c.keys), vals)
		c.idx[k.json] = len(c.keys)
		c.keys = append(c.keys, k)
		c.rows = append(c.rows, img)
		c.alive = append(c.alive, true)
		c.touched = append(c.touched, false)
		c.spool.reads.WriteString(`{"read":` + strconv.Itoa(i) + `,"k":` + k.json + `,"v":`)
		c.spool.reads.Write(img)
		c.spool.reads.WriteString("}\n")
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return c.s.dbErr(ctx, "reading chunk "+strconv.Itoa(i), err)
	}
	c.stats.Rows += int64(len(c.keys))
	return nil
}

// consume processes replication messages until one log position has been
// consumed, and returns what it was.
func (c *capture) consume(ctx context.Context) (step, error) {
	entered := time.Now()
	for {
		if err := c.stalled(entered); err != nil {
			return step{}, err
		}
		if time.Now().After(c.nextAck) {
			if err := c.ack(ctx, false); err != nil {
				return step{}, err
			}
		}
		rctx, cancel := context.WithDeadline(ctx, c.nextAck)
		msg, err := c.s.repl.ReceiveMessage(rctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return step{}, ctx.Err()
			}
			if pgconn.Timeout(err) {
				continue
			}
			return step{}, c.s.dbErr(ctx, "reading the change stream", err)
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			return step{}, ioErr("the change stream failed: %s (%s)", m.Message, m.Code)
		case *pgproto3.CopyData:
			if len(m.Data) == 0 {
				continue
			}
			switch m.Data[0] {
			case pglogrepl.PrimaryKeepaliveMessageByteID:
				ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(m.Data[1:])
				if err != nil {
					return step{}, ioErr("the change stream: %v", err)
				}
				c.walSent(ka.ServerWALEnd)
				if ka.ReplyRequested {
					if err := c.ack(ctx, true); err != nil {
						return step{}, err
					}
				}
			case pglogrepl.XLogDataByteID:
				x, err := pglogrepl.ParseXLogData(m.Data[1:])
				if err != nil {
					return step{}, ioErr("the change stream: %v", err)
				}
				c.walAt = time.Now()
				c.walSent(x.ServerWALEnd)
				st, ok, err := c.message(x)
				if err == nil {
					err = c.err
				}
				if err != nil {
					return step{}, err
				}
				if ok {
					return st, nil
				}
			}
		}
	}
}

// ack tells the server how far the stream has been processed.
func (c *capture) ack(ctx context.Context, now bool) error {
	// often enough that the keepalives it asks for come well within --stall
	c.nextAck = time.Now().Add(min(time.Second, c.s.opt.Stall/4))
	// A reply requested: the server's keepalive says how far it has read
	// the WAL, which advances while it decodes a large transaction (stall.go).
	err := pglogrepl.SendStandbyStatusUpdate(ctx, c.s.repl, pglogrepl.StandbyStatusUpdate{WALWritePosition: c.acked, ReplyRequested: true})
	if err != nil {
		return c.s.dbErr(ctx, "acknowledging the change stream", err)
	}
	return nil
}

// message handles one pgoutput message; ok says it consumed a position.
func (c *capture) message(x pglogrepl.XLogData) (st step, ok bool, err error) {
	m, err := pglogrepl.Parse(x.WALData)
	if err != nil {
		return st, false, ioErr("decoding pgoutput: %v", err)
	}
	switch m := m.(type) {
	case *pglogrepl.RelationMessage:
		var t *table
		switch {
		case m.Namespace == c.tab.schema && m.RelationName == c.tab.name:
			t = c.tab
		case m.Namespace == c.sig.schema && m.RelationName == c.sig.name:
			t = c.sig
		default:
			// A partition is described too, though its changes come under
			// its root's name (publish_via_partition_root); a change of
			// another relation is an error (change).
			c.rels[m.RelationID] = &table{qname: pgx.Identifier{m.Namespace, m.RelationName}.Sanitize()}
			return st, false, nil
		}
		if len(m.Columns) != len(t.cols) {
			return st, false, ioErr("table %s changed its columns while recording", t.qname)
		}
		for i, col := range m.Columns {
			if col.Name != t.cols[i].name {
				return st, false, ioErr("table %s changed its columns while recording", t.qname)
			}
		}
		c.rels[m.RelationID] = t
	case *pglogrepl.BeginMessage:
		c.xid, c.commitTime = m.Xid, m.CommitTime
	case *pglogrepl.CommitMessage:
		c.lastCommit = m.CommitLSN
		c.acked = m.TransactionEndLSN
	case *pglogrepl.InsertMessage:
		return c.change(x.WALStart, m.RelationID, "c", nil, m.Tuple)
	case *pglogrepl.UpdateMessage:
		return c.change(x.WALStart, m.RelationID, "u", m.OldTuple, m.NewTuple)
	case *pglogrepl.DeleteMessage:
		return c.change(x.WALStart, m.RelationID, "d", m.OldTuple, nil)
	case *pglogrepl.TruncateMessage:
		return st, false, ioErr("a table was truncated while recording: the log no longer describes its rows")
	}
	return st, false, nil
}

// tuple is a tuple's text values (nil for NULL) and the columns an update
// left unchanged in TOAST storage, which it does not carry.
func tuple(td *pglogrepl.TupleData) (vals [][]byte, toasted []int) {
	if td == nil {
		return nil, nil
	}
	vals = make([][]byte, len(td.Columns))
	for i, col := range td.Columns {
		switch col.DataType {
		case pglogrepl.TupleDataTypeNull:
		case pglogrepl.TupleDataTypeToast:
			toasted = append(toasted, i)
		default:
			vals[i] = col.Data
		}
	}
	return vals, toasted
}

// change handles one row change: a log position of the captured table or
// of the signalling table.
func (c *capture) change(lsn pglogrepl.LSN, rel uint32, op string, oldT, newT *pglogrepl.TupleData) (st step, ok bool, err error) {
	t := c.rels[rel]
	switch {
	case t == nil:
		return st, false, ioErr("the change stream carries a change of relation %d without describing it first", rel)
	case t != c.tab && t != c.sig:
		// Not the table the run reads (an inheritance child, say):
		// dropping its changes would lose them.
		return st, false, ioErr("the change stream carries changes of %s, which record did not expect while capturing %s (an inheritance child? record captures one table, and its chunk reads include its children's rows)", t.qname, c.tab.qname)
	}
	c.lastLSN = lsn
	oldV, oldToasted := tuple(oldT)
	newV, toasted := tuple(newT)
	if t == c.sig {
		if len(toasted)+len(oldToasted) > 0 {
			return st, false, ioErr("signalling table %s: a row's column is in TOAST storage", t.qname)
		}
		return c.signal(lsn, op, oldV, newV)
	}
	if err := c.toast.fill(t, oldV, oldToasted, newV, toasted); err != nil {
		return st, false, err
	}
	c.toast.saw(t, op, oldV, newV)
	var before, after []byte
	if oldV != nil {
		if before, err = t.image(nil, oldV); err != nil {
			return st, false, ioErr("table %s: %v", t.qname, err)
		}
	}
	if newV != nil {
		if after, err = t.image(nil, newV); err != nil {
			return st, false, ioErr("table %s: %v", t.qname, err)
		}
	}
	key := func(v [][]byte) (string, error) {
		k, err := t.keyOf(v)
		if err != nil {
			return "", ioErr("table %s: %v", t.qname, err)
		}
		return k.json, nil
	}
	if c.after {
		v := newV
		if v == nil {
			v = oldV
		}
		k, err := key(v)
		if err != nil {
			return st, false, err
		}
		st, err := c.afterRow(k, after)
		return st, err == nil, err
	}
	switch op {
	case "c":
		k, err := key(newV)
		if err != nil {
			return st, false, err
		}
		return c.rowEvent(lsn, op, k, nil, after), true, nil
	case "d":
		k, err := key(oldV)
		if err != nil {
			return st, false, err
		}
		return c.rowEvent(lsn, op, k, before, nil), true, nil
	}
	k, err := key(newV)
	if err != nil {
		return st, false, err
	}
	if oldV != nil {
		if ok, err := key(oldV); err == nil && ok != k {
			// A key change is a delete of the old key and an insert of the
			// new one, as Debezium emits it.
			c.rowEvent(lsn, "d", ok, before, nil)
			return c.rowEvent(lsn, "c", k, nil, after), true, nil
		}
	}
	return c.rowEvent(lsn, "u", k, before, after), true, nil
}

// rowEvent records a change of key k at the next position: the log event,
// the window's discard, and its emission at its own place (§6.2).
func (c *capture) rowEvent(lsn pglogrepl.LSN, op string, k string, before, after []byte) step {
	c.pos++
	p := c.pos
	c.stats.Positions = p
	img := after
	if img == nil {
		img = []byte("null")
	}
	w := c.spool.log
	w.WriteString(`{"p":` + strconv.FormatInt(p, 10) + `,"k":` + k + `,"v":`)
	w.Write(img)
	w.WriteString(`,"x":` + strconv.FormatUint(uint64(c.xid), 10) + "}\n")
	consumed := p > c.start
	if c.open && consumed {
		c.settle()
		if i, ok := c.idx[k]; ok {
			c.touched[i] = true
			if c.alive[i] {
				c.discard(p, i)
			}
		}
	}
	if consumed {
		c.emit(k, img)
		c.event(op, c.tab, before, after, lsn, "false")
	}
	return step{pos: p, key: k, hasKey: true}
}

// discard removes buffered row i, for an event at p in the open window —
// unless the fault under test says otherwise.
func (c *capture) discard(p int64, i int) {
	c.stats.Discarded++
	u := &c.units[c.cur-1]
	switch c.fault {
	case "no-discard":
		return
	case "low-edge-off-by-one":
		if p == u.lo+1 {
			return
		}
	case "high-edge-off-by-one":
		// The window is taken as (lo, hi-1]: the discard of the event just
		// before the high watermark is lost, so each waits for the next
		// position (settle) and is dropped at the close.
		c.pending = i + 1
		return
	}
	c.alive[i] = false
}

// settle applies a discard held back by high-edge-off-by-one: a later
// position of the window came, so its event was not at hi-1.
func (c *capture) settle() {
	if c.pending > 0 {
		c.alive[c.pending-1] = false
		c.pending = 0
	}
}

func (c *capture) emit(k string, v []byte) {
	if c.sink != nil {
		c.sink[k] = v
	}
	if c.check != nil && c.err == nil {
		c.err = c.check.emitted([]byte(k), c.pos, v)
	}
	w := c.spool.log
	w.WriteString(`{"out":` + k + `,"v":`)
	w.Write(v)
	w.WriteString(`,"tag":` + strconv.FormatInt(c.pos, 10) + "}\n")
	c.stats.Emitted++
}

// signal handles a row of the signalling table: a position without a key;
// this run's watermark rows open and close its chunks' windows.
func (c *capture) signal(lsn pglogrepl.LSN, op string, oldV, newV [][]byte) (st step, ok bool, err error) {
	if c.after {
		var id string
		if op == "c" && newV != nil {
			id = string(newV[c.sig.col("id")])
		}
		return c.afterSignal(id), true, nil
	}
	c.pos++
	p := c.pos
	c.stats.Positions = p
	c.spool.log.WriteString(`{"p":` + strconv.FormatInt(p, 10) + `,"x":` + strconv.FormatUint(uint64(c.xid), 10) + "}\n")
	st = step{pos: p}
	var id string
	if op == "c" && newV != nil {
		id = string(newV[c.sig.col("id")])
	}
	ours := c.cur > 0 && (id == c.signalID(c.cur, "open") || id == c.signalID(c.cur, "close"))
	if c.open && p > c.start && id != c.signalID(c.cur, "close") {
		c.settle()
	}
	// This run's signal rows (the execute-snapshot row, the window rows)
	// are change events, as a connector streams its signalling table; rows
	// of other runs sharing the table are positions only, as if each run
	// had a signalling table of its own.
	row := newV
	if row == nil {
		row = oldV
	}
	if row == nil || !strings.HasPrefix(string(row[c.sig.col("id")]), c.s.run+"-") {
		return st, true, nil
	}
	var before, after []byte
	if oldV != nil {
		if before, err = c.sig.image(nil, oldV); err != nil {
			return st, false, ioErr("table %s: %v", c.sig.qname, err)
		}
	}
	if newV != nil {
		if after, err = c.sig.image(nil, newV); err != nil {
			return st, false, ioErr("table %s: %v", c.sig.qname, err)
		}
	}
	if !ours {
		if p > c.start {
			c.event(op, c.sig, before, after, lsn, "false")
		}
		return st, true, nil // the execute-snapshot row: a position like any other
	}
	u := &c.units[c.cur-1]
	if id == c.signalID(c.cur, "open") {
		u.lo = p
		c.open = true
		if c.lateStart && c.cur == 1 {
			// late-start: consumption begins just past the first low edge.
			c.start = p + 1
			c.stats.Diverged++
		}
		st.open = c.cur
	} else {
		u.hi = p
		c.open = false
		if lag := time.Since(c.highAt); lag > c.stats.MaxLag {
			c.stats.MaxLag = lag
		}
		c.pending = 0
		st.close = c.cur
	}
	if st.close > 0 {
		// Debezium sends a window's rows before the close row's own event,
		// at the close's position: EventDispatcher.dispatchDataChangeEvent
		// hands the signal row to the source signal channel, whose
		// closeWindow (AbstractIncrementalSnapshotChangeEventSource) sends
		// the buffered rows, before streamingReceiver.changeRecord queues it.
		c.closeChunk(lsn)
	}
	if p > c.start {
		c.event(op, c.sig, before, after, lsn, "false")
	}
	return st, true, nil
}

// closeChunk emits the chunk's survivors at its high edge, in key order
// (the rows were read in key order); their events precede the close row's.
func (c *capture) closeChunk(lsn pglogrepl.LSN) {
	for i, k := range c.keys {
		if !c.alive[i] {
			continue
		}
		if c.touched[i] {
			c.stats.Diverged++ // a row the window's events should have discarded
		} else {
			c.toast.survived(i, k)
		}
		c.stats.Survivors++
		if c.fault == "copy-dropped" {
			c.stats.Diverged++
			continue
		}
		c.emit(k.json, c.rows[i])
		c.event("r", c.tab, nil, c.rows[i], lsn, "incremental")
	}
	c.cur = 0
	c.keys, c.rows, c.alive, c.touched = c.keys[:0], c.rows[:0], c.alive[:0], c.touched[:0]
	clear(c.idx)
}

// event writes one change event in Debezium's PostgreSQL envelope.
func (c *capture) event(op string, t *table, before, after []byte, lsn pglogrepl.LSN, snapshot string) {
	if c.events == nil {
		return
	}
	ms := c.commitTime.UnixMilli()
	b := c.buf[:0]
	b = append(b, `{"before":`...)
	b = appendImage(b, before)
	b = append(b, `,"after":`...)
	b = appendImage(b, after)
	b = append(b, `,"source":{"version":"cutcheck-record","connector":"postgresql","name":"cutcheck","ts_ms":`...)
	b = strconv.AppendInt(b, ms, 10)
	b = append(b, `,"snapshot":"`...)
	b = append(b, snapshot...)
	b = append(b, `","db":`...)
	b = appendString(b, c.s.cfg.Database)
	last := "null" // no transaction committed before this one in the stream
	if c.lastCommit != 0 {
		last = `"` + strconv.FormatUint(uint64(c.lastCommit), 10) + `"`
	}
	seq, _ := json.Marshal(`[` + last + `,"` + strconv.FormatUint(uint64(lsn), 10) + `"]`)
	b = append(b, `,"sequence":`...)
	b = append(b, seq...)
	b = append(b, `,"schema":`...)
	b = appendString(b, t.schema)
	b = append(b, `,"table":`...)
	b = appendString(b, t.name)
	b = append(b, `,"txId":`...)
	b = strconv.AppendUint(b, uint64(c.xid), 10)
	b = append(b, `,"lsn":`...)
	b = strconv.AppendUint(b, uint64(lsn), 10)
	b = append(b, `,"xmin":null},"op":"`...)
	b = append(b, op...)
	b = append(b, `","ts_ms":`...)
	b = strconv.AppendInt(b, ms, 10)
	b = append(b, `,"transaction":null}`+"\n"...)
	c.events.Write(b)
	c.buf = b
}

func appendImage(b, img []byte) []byte {
	if img == nil {
		return append(b, "null"...)
	}
	return append(b, img...)
}

// finish writes the bundle: the header (known only now: the brackets and
// the frontier), the reads, then the log with the emitted entries.
func (c *capture) finish(w io.Writer) error {
	if c.events != nil {
		if err := c.events.Flush(); err != nil {
			return ioErr("writing the events: %v", err)
		}
	}
	if c.notes != nil {
		if err := c.notes.Flush(); err != nil {
			return ioErr("writing the notifications: %v", err)
		}
	}
	for i, u := range c.units {
		if u.lo < 0 || u.hi < 0 {
			return ioErr("chunk %d never closed", i+1)
		}
	}
	if w == nil {
		return nil
	}
	num := func(k keyVal) json.RawMessage { return json.RawMessage(k.json) }
	// The claim covers the chunks planned: every key up to the maximum key
	// once the backfill is done; a schedule may stop after its first chunk.
	scope := certify.ScopeSpec{Keys: []json.RawMessage{}}
	units := c.units
	if n := len(units); n > 0 {
		scope = certify.ScopeSpec{Ranges: []certify.RangeSpec{{Le: num(units[n-1].le)}}}
		if c.s.opt.Schedule == nil {
			// The backfill claims every key: the maximum-key query in the
			// first window found none above it.
			scope = certify.ScopeSpec{Ranges: []certify.RangeSpec{{}}}
			if !units[0].inf {
				mk := c.maxKey
				units = append(units[:n:n], unit{gt: &mk, inf: true, lo: units[0].lo, hi: units[0].hi})
			}
		}
	}
	frontier := c.pos
	if n := len(c.units); n > 0 {
		frontier = c.units[n-1].hi
	}
	entries := c.stats.Emitted
	keys := "string"
	if c.tab.intKey {
		keys = "integer"
	}
	h := certify.Header{Format: certify.Format, Version: certify.Version, Coordinates: "position", Keys: keys,
		Base: "from-reads", Discipline: certify.WindowDiscard, Reads: "all",
		Certificate: certify.Certificate{Scope: scope, Frontier: frontier, PrefixEntries: &entries},
		Run:         certify.Run{Scope: scope, Start: c.start, Consumed: frontier},
		Units:       []certify.UnitSpec{},
	}
	for _, u := range units {
		if !u.inf && u.gt != nil && u.gt.json == u.le.json {
			continue // the last window, after a chunk that read the maximum key: no key left
		}
		r := certify.RangeSpec{}
		if !u.inf {
			r.Le = num(u.le)
		}
		if u.gt != nil {
			r.Gt = num(*u.gt)
		}
		lo, hi := u.lo, u.hi
		h.Units = append(h.Units, certify.UnitSpec{Domain: certify.ScopeSpec{Ranges: []certify.RangeSpec{r}}, Lo: &lo, Hi: &hi})
	}
	c.stats.Frontier = frontier
	head, err := json.Marshal(h)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.Write(head)
	bw.WriteByte('\n')
	if err := c.spool.copyTo(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return ioErr("writing the bundle: %v", err)
	}
	return nil
}

// spool holds the bundle's reads and log while the run goes on: the header
// comes first but is known last, and the reads precede the log.
type spool struct {
	rf, lf     *os.File
	reads, log *bufio.Writer
}

func newSpool(dir string) (*spool, error) {
	s := &spool{}
	var err error
	if s.rf, err = spoolFile(dir, "reads"); err != nil {
		return nil, err
	}
	if s.lf, err = spoolFile(dir, "log"); err != nil {
		s.remove()
		return nil, err
	}
	s.reads, s.log = bufio.NewWriterSize(s.rf, 1<<16), bufio.NewWriterSize(s.lf, 1<<16)
	return s, nil
}

func (s *spool) copyTo(w io.Writer) error {
	for _, p := range []struct {
		f *os.File
		b *bufio.Writer
	}{{s.rf, s.reads}, {s.lf, s.log}} {
		if err := p.b.Flush(); err != nil {
			return ioErr("writing a temporary file: %v", err)
		}
		if _, err := p.f.Seek(0, 0); err != nil {
			return ioErr("reading a temporary file: %v", err)
		}
		if _, err := io.Copy(w, p.f); err != nil {
			return ioErr("writing the bundle: %v", err)
		}
	}
	return nil
}

func (s *spool) remove() {
	for _, f := range []*os.File{s.rf, s.lf} {
		if f != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}
}
