package record

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/jackc/pgx/v5"
)

// The table is the oracle. certify trusts the recorder's observation (the
// "faithful source observation" of seed 003 §3); at the end of a backfill
// the recorder checks it against the table itself. With its workload
// stopped it writes a marker signal row M1, reads the whole table in one
// REPEATABLE READ transaction, writes a marker M2 and consumes the stream
// through M2. The read's snapshot lies between the markers in the log, so
// every key's value in the table must be the replay of the emitted stream
// at some position of [M1, M2]: the replay at M1 or an emission of the key
// inside the bracket. Without writers the bracket holds no event and this
// is equality. Keys and images are compared as the bundle writes them.
//
// Memory: the emitted entries and the table's rows go to an external sort
// on disk, by key; the check then walks one key at a time.

// oracle collects the emitted stream and the table read for the check.
type oracle struct {
	sort   *sorter
	m1, m2 int64 // the markers' positions, 0 until consumed
}

const (
	fromTable   = 0
	fromEmitted = 1
)

func newOracle(dir string) *oracle { return &oracle{sort: &sorter{dir: dir}} }

// emitted records an entry of the emitted stream: key k's image (or null)
// at position pos.
func (o *oracle) emitted(k []byte, pos int64, img []byte) error {
	return o.sort.add(entry{key: k, kind: fromEmitted, pos: pos, img: img})
}

func (c *capture) markerID(name string) string { return c.s.run + "-oracle-" + name }

// verify runs the check and returns the first difference, "" for none.
func (c *capture) verify(ctx context.Context) (string, error) {
	c.after = true
	if err := c.writeMarker(ctx, "begin"); err != nil {
		return "", err
	}
	// As for a chunk: a commit before M1 in the log must be visible to the read.
	if err := c.awaitVisible(ctx); err != nil {
		return "", err
	}
	if err := c.readTable(ctx); err != nil {
		return "", err
	}
	if err := c.writeMarker(ctx, "end"); err != nil {
		return "", err
	}
	for c.check.m2 == 0 {
		if _, err := c.consume(ctx); err != nil {
			return "", err
		}
	}
	return c.check.result(&c.stats)
}

func (c *capture) writeMarker(ctx context.Context, name string) error {
	_, err := c.s.sql.Exec(ctx, "INSERT INTO "+c.sig.qname+" (id, type, data) VALUES ($1, 'cutcheck-oracle', '{}')", c.markerID(name))
	if err != nil {
		return c.s.dbErr(ctx, "writing the oracle's marker", err)
	}
	return nil
}

// readTable reads every row in one snapshot, rendered as the chunk reads
// render them.
func (c *capture) readTable(ctx context.Context) error {
	tx, err := c.s.sql.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return c.s.dbErr(ctx, "reading the table for the oracle check", err)
	}
	defer tx.Rollback(ctx)
	rows, err := tx.Query(ctx, "SELECT "+c.tab.selectList()+" FROM "+c.tab.qname, textFormat)
	if err != nil {
		return c.s.dbErr(ctx, "reading the table for the oracle check", err)
	}
	defer rows.Close()
	for rows.Next() {
		vals := rows.RawValues()
		img, err := c.tab.image(nil, vals)
		if err != nil {
			return ioErr("table %s: %v", c.tab.qname, err)
		}
		k, err := c.tab.keyOf(vals)
		if err != nil {
			return ioErr("table %s: %v", c.tab.qname, err)
		}
		// The key as the bundle writes it: its JSON form.
		if err := c.check.sort.add(entry{key: []byte(k.json), kind: fromTable, img: img}); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return c.s.dbErr(ctx, "reading the table for the oracle check", err)
	}
	return tx.Commit(ctx)
}

// afterRow handles a row change past the backfill's frontier: it goes to
// the sink (the check), not to the bundle.
func (c *capture) afterRow(k string, after []byte) (step, error) {
	c.pos++
	if c.check.m1 > 0 {
		c.stats.Bracketed++
	}
	img := after
	if img == nil {
		img = []byte("null")
	}
	return step{pos: c.pos, key: k, hasKey: true}, c.check.emitted([]byte(k), c.pos, img)
}

// afterSignal handles a signal row past the frontier: the markers.
func (c *capture) afterSignal(id string) step {
	c.pos++
	switch id {
	case c.markerID("begin"):
		c.check.m1 = c.pos
	case c.markerID("end"):
		c.check.m2 = c.pos
	}
	return step{pos: c.pos}
}

// result walks the keys in order and returns the first whose table value
// is none of the replay's values in [M1, M2].
func (o *oracle) result(st *Stats) (string, error) {
	defer o.sort.remove()
	it, err := o.sort.iter()
	if err != nil {
		return "", err
	}
	e, ok, err := it.next()
	for ok && err == nil {
		key := e.key
		var table, atM1 []byte // nil: absent
		var inside [][]byte
		for ok && err == nil && bytes.Equal(e.key, key) {
			img := e.img
			if string(img) == "null" {
				img = nil
			}
			switch {
			case e.kind == fromTable:
				table = img
			case e.pos <= o.m1:
				atM1 = img
			case e.pos < o.m2:
				inside = append(inside, img)
			}
			e, ok, err = it.next()
		}
		st.Checked++
		if bytes.Equal(table, atM1) && (table == nil) == (atM1 == nil) {
			continue
		}
		match := false
		for _, v := range inside {
			if bytes.Equal(table, v) && (table == nil) == (v == nil) {
				match = true
			}
		}
		if !match {
			last := atM1
			if n := len(inside); n > 0 {
				last = inside[n-1]
			}
			return difference(key, table, last), nil
		}
	}
	return "", err
}

// difference says how the table and the stream differ at a key, naming the
// first differing column.
func difference(key, table, stream []byte) string {
	head := "the oracle check failed: the emitted stream differs from the table at key " + string(key) + ": "
	switch {
	case table == nil:
		return head + "the table has no row, the stream holds " + clip(stream)
	case stream == nil:
		return head + "the table holds " + clip(table) + ", the stream has no row"
	}
	var t, s map[string]json.RawMessage
	json.Unmarshal(table, &t)
	json.Unmarshal(stream, &s)
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !bytes.Equal(t[n], s[n]) {
			return head + "column " + n + " is " + clip(t[n]) + " in the table and " + clip(s[n]) + " in the stream"
		}
	}
	return head + "the table holds " + clip(table) + ", the stream " + clip(stream)
}

func clip(b []byte) string {
	if b == nil {
		return "absent"
	}
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

// entry is one record of the external sort: by key, the table's row
// before the emitted entries, those in position order.
type entry struct {
	key  []byte
	kind byte
	pos  int64
	img  []byte
}

func less(a, b *entry) bool {
	if c := bytes.Compare(a.key, b.key); c != 0 {
		return c < 0
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.pos < b.pos
}

// sortBudget bounds the bytes held in memory before a sorted run is
// written to disk.
const sortBudget = 4 << 20

// sorter is an external merge sort of entries: sorted runs of at most
// sortBudget bytes in temporary files, merged when read. The entries in
// memory share one reused arena, so a long run makes no garbage.
type sorter struct {
	dir    string
	budget int // 0: sortBudget
	arena  []byte
	buf    []span
	files  []*os.File
}

// span is an entry in the arena: its key is arena[at:mid], its image
// arena[mid:end].
type span struct {
	at, mid, end int
	kind         byte
	pos          int64
}

func (s *sorter) entry(p span) entry {
	return entry{key: s.arena[p.at:p.mid], kind: p.kind, pos: p.pos, img: s.arena[p.mid:p.end]}
}

func (s *sorter) add(e entry) error {
	at := len(s.arena)
	s.arena = append(append(s.arena, e.key...), e.img...)
	s.buf = append(s.buf, span{at: at, mid: at + len(e.key), end: len(s.arena), kind: e.kind, pos: e.pos})
	if len(s.arena)+len(s.buf)*40 >= cmp.Or(s.budget, sortBudget) {
		return s.spill()
	}
	return nil
}

// spill writes the buffer, sorted, as one run.
func (s *sorter) spill() error {
	sort.SliceStable(s.buf, func(i, j int) bool {
		a, b := s.entry(s.buf[i]), s.entry(s.buf[j])
		return less(&a, &b)
	})
	f, err := spoolFile(s.dir, "oracle")
	if err != nil {
		return err
	}
	s.files = append(s.files, f)
	w := bufio.NewWriterSize(f, 1<<16)
	var n [binary.MaxVarintLen64]byte
	for _, p := range s.buf {
		e := s.entry(p)
		w.Write(n[:binary.PutUvarint(n[:], uint64(len(e.key)))])
		w.Write(e.key)
		w.WriteByte(e.kind)
		w.Write(n[:binary.PutVarint(n[:], e.pos)])
		w.Write(n[:binary.PutUvarint(n[:], uint64(len(e.img)))])
		w.Write(e.img)
	}
	if err := w.Flush(); err != nil {
		return ioErr("writing a temporary file: %v", err)
	}
	s.arena, s.buf = s.arena[:0], s.buf[:0]
	return nil
}

func (s *sorter) remove() {
	for _, f := range s.files {
		f.Close()
		os.Remove(f.Name())
	}
	s.files = nil
}

// run reads one sorted run back.
type run struct {
	r   *bufio.Reader
	cur entry
}

func (r *run) next() (bool, error) {
	kl, err := binary.ReadUvarint(r.r)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, ioErr("reading a temporary file: %v", err)
	}
	e := entry{key: make([]byte, kl)}
	if _, err := io.ReadFull(r.r, e.key); err != nil {
		return false, ioErr("reading a temporary file: %v", err)
	}
	if e.kind, err = r.r.ReadByte(); err != nil {
		return false, ioErr("reading a temporary file: %v", err)
	}
	if e.pos, err = binary.ReadVarint(r.r); err != nil {
		return false, ioErr("reading a temporary file: %v", err)
	}
	il, err := binary.ReadUvarint(r.r)
	if err != nil {
		return false, ioErr("reading a temporary file: %v", err)
	}
	e.img = make([]byte, il)
	if _, err := io.ReadFull(r.r, e.img); err != nil {
		return false, ioErr("reading a temporary file: %v", err)
	}
	r.cur = e
	return true, nil
}

// merge is the k-way merge of the runs.
type merge []*run

func (m merge) Len() int           { return len(m) }
func (m merge) Less(i, j int) bool { return less(&m[i].cur, &m[j].cur) }
func (m merge) Swap(i, j int)      { m[i], m[j] = m[j], m[i] }
func (m *merge) Push(x any)        { *m = append(*m, x.(*run)) }
func (m *merge) Pop() any {
	old := *m
	r := old[len(old)-1]
	*m = old[:len(old)-1]
	return r
}

type iterator struct{ m merge }

// iter spills what is in memory and opens the merge of every run.
func (s *sorter) iter() (*iterator, error) {
	if len(s.buf) > 0 || len(s.files) == 0 {
		if err := s.spill(); err != nil {
			return nil, err
		}
	}
	it := &iterator{}
	for _, f := range s.files {
		if _, err := f.Seek(0, 0); err != nil {
			return nil, ioErr("reading a temporary file: %v", err)
		}
		r := &run{r: bufio.NewReaderSize(f, 1<<14)}
		ok, err := r.next()
		if err != nil {
			return nil, err
		}
		if ok {
			it.m = append(it.m, r)
		}
	}
	heap.Init(&it.m)
	return it, nil
}

func (it *iterator) next() (entry, bool, error) {
	if len(it.m) == 0 {
		return entry{}, false, nil
	}
	r := it.m[0]
	e := r.cur
	ok, err := r.next()
	if err != nil {
		return e, false, err
	}
	if ok {
		heap.Fix(&it.m, 0)
	} else {
		heap.Pop(&it.m)
	}
	return e, true, nil
}

// spoolFile creates a temporary file of this process in dir (default: the
// system's), named so that Clean can tell it is this tool's and whether its
// process is gone: cutcheck-record-<pid>-<part>-*.
func spoolFile(dir, part string) (*os.File, error) {
	f, err := os.CreateTemp(dir, fmt.Sprintf("%s%d-%s-*", SpoolPrefix, os.Getpid(), part))
	if err != nil {
		return nil, ioErr("creating a temporary file: %v", err)
	}
	return f, nil
}

// SpoolPrefix starts the name of every temporary file record makes.
const SpoolPrefix = "cutcheck-record-"
