package certify

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
)

// The converter in one pass over the recording, its memory bounded: each
// event goes, with its row images, into an external sort keyed by its
// place in the commit order (order, eventKey), and is placed when the sort
// hands it back; what the checks need of the events already read (the
// positions placed on each stream, the transaction labels, the keys the
// log writes, the chunks' rows) goes to files in the spool directory.

// The order is the recording's events in the connector's commit order. Kafka
// keeps order within a topic partition only, so the evidence is: each
// stream (a topic of one file) in its delivery order, and every event's
// source position. Streams are merged by position; events at one position
// (a COPY, a multi-row statement) keep their stream's delivery order; a
// window's snapshot rows carry their close's position (closeWindow runs
// while the close row is dispatched, before its own event is queued:
// EventDispatcher.dispatchDataChangeEvent,
// AbstractIncrementalSnapshotChangeEventSource.closeWindow) and are placed
// after it, whether delivered before it or after. Events of two streams at
// one position are in no order the evidence fixes: Unsupported. An event at
// a position its stream has passed is a redelivery if an event of the same
// content was delivered there, else Unsupported.
//
// eventKey is an event's place in that order: its source position,
// at one position the events that make the log, then the rows of the
// window closed there, then redeliveries; then its stream and its place in
// the stream's delivery order.
func eventKey(b []byte, e *dbzEvent) []byte {
	for _, p := range e.pos {
		b = binary.BigEndian.AppendUint64(b, p)
	}
	rank := byte(0)
	switch {
	case e.redelivery:
		rank = 2
	case e.read:
		rank = 1
	}
	b = append(b, rank)
	b = binary.BigEndian.AppendUint32(b, uint32(e.stream))
	return binary.BigEndian.AppendUint64(b, uint64(e.seq))
}

const eventKeyLen = 24 + 1 + 4 + 8

func decodeEventKey(k []byte, e *dbzEvent) (rank byte) {
	for i := range e.pos {
		e.pos[i] = binary.BigEndian.Uint64(k[8*i:])
	}
	e.stream = int(binary.BigEndian.Uint32(k[25:]))
	e.seq = int(binary.BigEndian.Uint64(k[29:]))
	return k[24]
}

const (
	flagRead = 1 << iota
	flagSignal
	flagRedelivery
	flagTx
)

// eventPayload is what placing an event needs of it besides its key.
func eventPayload(b []byte, e *dbzEvent, before, after []byte) []byte {
	b = binary.AppendUvarint(b, uint64(e.file))
	b = binary.AppendUvarint(b, uint64(e.line))
	var fl byte
	for _, f := range []struct {
		on  bool
		bit byte
	}{{e.read, flagRead}, {e.signal, flagSignal}, {e.redelivery, flagRedelivery}, {e.env.Transaction != nil, flagTx}} {
		if f.on {
			fl |= f.bit
		}
	}
	b = append(b, fl)
	tx := ""
	if e.env.Transaction != nil {
		tx = e.env.Transaction.ID
	}
	b = appendStr(b, e.env.Op)
	b = appendStr(b, tx)
	b = appendStr(b, e.table)
	b = appendStr(b, e.db)
	b = appendStr(b, e.txID)
	b = appendStr(b, e.gtid)
	b = binary.AppendUvarint(b, uint64(e.schema))
	return appendStr(appendStr(b, before), after)
}

func appendStr[T string | []byte](b []byte, s T) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// payloadReader reads a payload's members in order.
type payloadReader struct{ b []byte }

func (r *payloadReader) uint() uint64 {
	n, k := binary.Uvarint(r.b)
	r.b = r.b[k:]
	return n
}

func (r *payloadReader) bytes() []byte {
	n := r.uint()
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

// decodeEvent rebuilds an event from its key and payload; its images alias
// the payload and are read into st.
func (c *dbzConverter) decodeEvent(k, p []byte, e *dbzEvent, st *rawStore) error {
	*e = dbzEvent{}
	decodeEventKey(k, e)
	r := payloadReader{p}
	e.file, e.line = int(r.uint()), int(r.uint())
	fl := r.b[0]
	r.b = r.b[1:]
	e.read, e.signal, e.redelivery = fl&flagRead != 0, fl&flagSignal != 0, fl&flagRedelivery != 0
	e.env.Op = keep(c.names, r.bytes())
	if tx := string(r.bytes()); fl&flagTx != 0 {
		e.env.Transaction = &struct {
			ID string `json:"id"`
		}{tx}
	}
	e.table, e.db = keep(c.names, r.bytes()), keep(c.names, r.bytes())
	e.txID, e.gtid = string(r.bytes()), string(r.bytes())
	if e.schema = int(r.uint()); e.schema > 0 {
		e.jsonCols = c.schemaCols[e.schema-1]
	}
	e.ours = e.table == c.ours && c.ours != ""
	// written by prepare in canonical form: an object or null
	before := r.bytes()
	e.after = r.bytes()
	var err error
	if e.env.Before, err = readObject(&st.before, before); err == nil {
		e.env.After, err = readObject(&st.after, e.after)
	}
	return err
}

// placeEvents hands the sort's events to record in the commit order. They
// are read from the sort and decoded on another goroutine, a batch at a
// time, while the batch before is placed; nothing else interns names or
// changes c.ours meanwhile.
func (c *dbzConverter) placeEvents() (*Failure, error) {
	type batch struct {
		buf []byte // the events' keys and payloads, which they alias
		evs []dbzEvent
		raw []rawStore
		err error // the sort's or a decoding's, after the events
	}
	const perBatch, batches = 1024, 3
	free, order := make(chan *batch, batches), make(chan *batch, batches) // (order never blocks)
	for range batches {
		free <- &batch{evs: make([]dbzEvent, 0, perBatch), raw: make([]rawStore, perBatch)}
	}
	stop := make(chan struct{})
	go func() {
		defer close(order)
		b := <-free
		var derr error
		err := c.events.pass(func(k, p []byte) bool {
			off := len(b.buf)
			b.buf = append(append(b.buf, k...), p...)
			k, p = b.buf[off:off+len(k)], b.buf[off+len(k):]
			n := len(b.evs)
			b.evs = b.evs[:n+1]
			if derr = c.decodeEvent(k, p, &b.evs[n], &b.raw[n]); derr != nil {
				b.evs = b.evs[:n]
				return false
			}
			if n+1 < perBatch && len(b.buf) < batchBytes {
				return true
			}
			order <- b
			select {
			case <-stop:
				b = nil
				return false
			default:
			}
			select {
			case b = <-free:
			case <-stop:
				b = nil
				return false
			}
			b.buf, b.evs = b.buf[:0], b.evs[:0]
			return true
		})
		if b != nil {
			b.err = cmpErr(err, derr)
			order <- b
		}
	}()
	defer func() { // the reader stops before the sort is removed
		close(stop)
		for range order {
		}
	}()
	for b := range order {
		if stopped(c.opt.Stop) {
			return nil, ErrStopped
		}
		for i := range b.evs {
			e := &b.evs[i]
			c.file, c.line = e.file, e.line
			c.tick("placing")
			if f := c.record(e); f != nil || c.spErr != nil {
				return f, nil
			}
		}
		if b.err != nil {
			return nil, b.err
		}
		free <- b
	}
	return nil, nil
}

// dbzStream is what order needs of a stream's events read so far: its
// highest position, the contents placed there, and every placed position
// and content in a file, in position order, for a redelivery further back.
type dbzStream struct {
	n    int
	hi   dbzPos
	atHi map[[16]byte]bool
	f    *os.File
	w    *bufio.Writer
	recs int64
}

const placedLen = 24 + 16

// sequence takes the next event of a stream as order does (its place in
// the stream, a redelivery, or positions going back: the first such is
// kept in c.orderFail, which the reading does not stop at).
func (c *dbzConverter) sequence(e *dbzEvent) error {
	for len(c.seq) <= e.stream {
		c.seq = append(c.seq, nil)
	}
	s := c.seq[e.stream]
	if s == nil {
		f, err := os.Create(fmt.Sprintf("%s/placed-%d", c.sp.dir, e.stream))
		if err != nil {
			return err
		}
		s = &dbzStream{atHi: map[[16]byte]bool{}, f: f, w: bufio.NewWriterSize(f, 1<<14)}
		c.seq[e.stream] = s
	}
	e.seq = s.n
	s.n++
	if s.n > 1 && !s.hi.less(e.pos) {
		red, err := s.redelivered(e.pos, e.sum)
		if err != nil {
			return err
		}
		if red {
			e.redelivery, e.pos = true, s.hi // delivered where its stream had reached
			return nil
		}
	}
	if s.n > 1 && e.pos.less(s.hi) {
		if c.orderFail == nil {
			c.orderFail = c.failAt(e.file, e.line, "source.sequence", "source position %v after %v in the same topic, and no redelivery of an event there: the topic's order is not the connector's commit order (a topic of several partitions, or two dumps joined)", e.pos, s.hi)
		}
		return nil
	}
	if s.n == 1 || s.hi.less(e.pos) {
		if len(s.atHi) > 16 {
			s.atHi = map[[16]byte]bool{} // clearing costs its capacity: a window's rows grew it
		} else {
			clear(s.atHi)
		}
	}
	s.hi = e.pos
	s.atHi[e.sum] = true
	var rec [placedLen]byte
	for i, p := range e.pos {
		binary.BigEndian.PutUint64(rec[8*i:], p)
	}
	copy(rec[24:], e.sum[:])
	s.recs++
	_, err := s.w.Write(rec[:])
	return err
}

// redelivered says whether content sum was placed at pos (at most hi).
func (s *dbzStream) redelivered(pos dbzPos, sum [16]byte) (bool, error) {
	if pos == s.hi {
		return s.atHi[sum], nil
	}
	if err := s.w.Flush(); err != nil {
		return false, err
	}
	var rec [placedLen]byte
	read := func(i int64) (dbzPos, error) {
		_, err := s.f.ReadAt(rec[:], i*placedLen)
		var p dbzPos
		for j := range p {
			p[j] = binary.BigEndian.Uint64(rec[8*j:])
		}
		return p, err
	}
	lo, hi := int64(0), s.recs // the first record at or past pos
	for lo < hi {
		mid := (lo + hi) / 2
		p, err := read(mid)
		if err != nil {
			return false, err
		}
		if p.less(pos) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	for ; lo < s.recs; lo++ {
		p, err := read(lo)
		if err != nil || p != pos {
			return false, err
		}
		if [16]byte(rec[24:]) == sum {
			return true, nil
		}
	}
	return false, nil
}

// twoTopics is order's last check, on the merged order: events of two
// streams at one position that make the log are in no order the evidence
// fixes.
func (c *dbzConverter) twoTopics() (*Failure, error) {
	var f *Failure
	var prev dbzEvent
	var prevRank byte = 255
	err := c.events.pass(func(k, p []byte) bool {
		var e dbzEvent
		rank := decodeEventKey(k, &e)
		r := payloadReader{p}
		e.file, e.line = int(r.uint()), int(r.uint())
		if rank == 0 && prevRank == 0 && e.pos == prev.pos && e.stream != prev.stream {
			f = c.failAt(e.file, e.line, "source.sequence", "events of two topics at one source position %v (%s line %d and line %d): their order is not evidenced", e.pos, c.inputs[prev.file], prev.line, e.line)
			return false
		}
		prev, prevRank = e, rank
		return true
	})
	return f, err
}

// dbzTable is what captured needs of a table's initial-snapshot rows.
type dbzTable struct {
	name, snapshot string
	signal         bool
	initial        int // its rows of initial snapshots
	file, line     int // the first's
}

// noteTable takes what captured needs of an event as it is read.
func (c *dbzConverter) noteTable(e *dbzEvent) {
	if !slices.Contains(c.tables, e.table) {
		c.tables = append(c.tables, e.table)
	}
	if e.signal = matches(c.opt.SignalTable, e.table, e.db); !e.signal &&
		(c.opt.Table == "" || matches(c.opt.Table, e.table, e.db)) && !slices.Contains(c.named, e.table) {
		c.named = append(c.named, e.table)
	}
	if !e.initial {
		return
	}
	i := slices.IndexFunc(c.initials, func(t *dbzTable) bool { return t.name == e.table && t.signal == e.signal })
	if i < 0 {
		i = len(c.initials)
		c.initials = append(c.initials, &dbzTable{name: e.table, signal: e.signal, snapshot: e.snapshot, file: e.file, line: e.line})
	}
	c.initials[i].initial++
}

// spoolFile is a file of records written once and read through in order.
type spoolFile struct {
	f   *os.File
	w   *bufio.Writer
	n   int64 // bytes written
	buf []byte
}

func (s *dbzSpool) file(name string) (*spoolFile, error) {
	f, err := os.Create(s.dir + "/" + name)
	if err != nil {
		return nil, err
	}
	return &spoolFile{f: f, w: bufio.NewWriterSize(f, 1<<16)}, nil
}

// put appends a record; at is where it starts.
func (s *spoolFile) put(rec []byte) (at int64, err error) {
	at = s.n
	s.buf = binary.AppendUvarint(s.buf[:0], uint64(len(rec)))
	s.w.Write(s.buf)
	_, err = s.w.Write(rec)
	s.n += int64(len(s.buf) + len(rec))
	return at, err
}

// each reads the records from offset at on, until each returns false.
func (s *spoolFile) each(at int64, each func(rec []byte) bool) error {
	if err := s.w.Flush(); err != nil {
		return err
	}
	r := bufio.NewReaderSize(io.NewSectionReader(s.f, at, s.n-at), 1<<16)
	var rec []byte
	for {
		n, err := binary.ReadUvarint(r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		rec = slices.Grow(rec[:0], int(n))[:n]
		if _, err := io.ReadFull(r, rec); err != nil {
			return err
		}
		if !each(rec) {
			return nil
		}
	}
}

// appendKey and readKey write a bundle key in a spool record.
func appendKey(b []byte, k dkey) []byte {
	b = binary.AppendVarint(b, k.i)
	return appendStr(b, k.s)
}

func readKey(r *payloadReader) dkey {
	n, m := binary.Varint(r.b)
	r.b = r.b[m:]
	return dkey{i: n, s: string(r.bytes())}
}

// labelRun notes where a transaction label's run of events starts, for
// labelCheck: the label, the run's number, the label before it and the
// event's place.
func (c *dbzConverter) labelRun(id string) {
	key := binary.BigEndian.AppendUint32(c.keyBuf[:0], uint32(len(id)))
	key = append(key, id...)
	c.keyBuf = binary.BigEndian.AppendUint64(key, uint64(c.txRuns))
	p := appendStr(c.payBuf[:0], c.lastTx)
	p = binary.AppendUvarint(p, uint64(c.file))
	c.payBuf = binary.AppendUvarint(p, uint64(c.line))
	c.labels.add(c.keyBuf, c.payBuf) // (copied)
}

// labelCheck finds the first event whose transaction's events came before
// another transaction's (a label with two runs): label's check, made once
// the events are placed, on the runs sorted by label.
func (c *dbzConverter) labelCheck() (*Failure, error) {
	var first *Failure
	firstRun := uint64(0)
	var cur []byte
	err := c.labels.pass(func(k, p []byte) bool {
		id := k[4 : len(k)-8]
		run := binary.BigEndian.Uint64(k[len(k)-8:])
		if !bytes.Equal(id, cur) {
			cur = append(cur[:0], id...)
			return true
		}
		if first != nil && run >= firstRun {
			return true
		}
		r := payloadReader{p}
		prev := string(r.bytes())
		file, line := int(r.uint()), int(r.uint())
		first, firstRun = c.failAt(file, line, "transaction", "an event of transaction %s after transaction %s's: a transaction's events are contiguous in commit order", id, prev), run
		return true
	})
	return first, err
}

// firstAbove is the first row of a chunk above a key (one is: its last).
func (c *dbzConverter) firstAbove(ch *dbzChunk, end dkey) dkey {
	k := ch.last
	err := c.reads.each(ch.rowsAt, func(rec []byte) bool {
		r := payloadReader{rec}
		r.uint()
		if row := readKey(&r); c.cmp(row, end) > 0 {
			k = row
			return false
		}
		return true
	})
	if err != nil {
		c.spErr = err
	}
	return k
}

// untouchedAnswers answers plan's questions (a, b): whether no key the log
// writes lies strictly between a and b (nil: unbounded), in one read of
// those keys. The questions are the gaps between chunks, in key order and
// apart; if they are not, each key is put to every one.
func (c *dbzConverter) untouchedAnswers(asked [][2]*dkey) ([]bool, error) {
	answers := make([]bool, len(asked))
	for i := range answers {
		answers[i] = true
	}
	below := func(a *dkey, k dkey) bool { return a == nil || c.cmp(*a, k) < 0 }
	order := make([]int, len(asked))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		a, b := asked[i][0], asked[j][0]
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return -1
		case b == nil:
			return 1
		}
		return c.cmp(*a, *b)
	})
	apart := true
	for i := 1; i < len(order); i++ {
		prev, next := asked[order[i-1]], asked[order[i]]
		if next[0] == nil || c.cmp(*prev[1], *next[0]) > 0 {
			apart = false
		}
	}
	err := c.touched.each(0, func(rec []byte) bool {
		r := payloadReader{rec}
		k := readKey(&r)
		if !apart {
			for i, q := range asked {
				if below(q[0], k) && c.cmp(k, *q[1]) < 0 {
					answers[i] = false
				}
			}
			return true
		}
		// the last question whose lower bound is below k
		j, _ := slices.BinarySearchFunc(order, k, func(i int, k dkey) int {
			if below(asked[i][0], k) {
				return -1
			}
			return 1
		})
		if j > 0 {
			if q := order[j-1]; c.cmp(k, *asked[q][1]) < 0 {
				answers[q] = false
			}
		}
		return true
	})
	return answers, err
}
