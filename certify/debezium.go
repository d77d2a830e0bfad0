package certify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// DebeziumOptions say how to read a Debezium-style recording.
type DebeziumOptions struct {
	Table       string // the captured table (source.table); "" = every table but the signal table
	SignalTable string // the signalling table (source.table) holding the window rows; default "debezium_signal"
	Key         string // the primary-key column of the captured table; default "id"
	Position    string // the field of source ordering the log (lsn, pos, …); default "lsn"
}

// FromDebezium converts a Debezium-style recording of an incremental snapshot
// into an evidence bundle (FORMAT.md, "From Debezium"). The recording is the
// connector's delivered change events in delivery order, one JSON envelope a
// line ({"before", "after", "source", "op", …}, optionally wrapped in
// {"payload": …}):
//
//   - op c, u, d on the captured table are log events, each also delivered at
//     its own place (window-discard, §6.2 of the main paper);
//   - rows of the signalling table with type snapshot-window-open and
//     snapshot-window-close are the low and high watermarks of one chunk
//     (ids "<chunk>-open" and "<chunk>-close"); they are log positions
//     without a key;
//   - op r with source.snapshot "incremental" are the chunk rows delivered at
//     the window's close: the survivors of the read (the rows the window
//     discarded are not delivered, so the bundle declares survivor-only
//     reads).
//
// A chunk's domain is the key range the connector read: the open row's data
// may state it ({"range": {"gt": …, "le": …}}); otherwise it is the range from
// the previous chunk's last delivered key (exclusive) to this chunk's last
// delivered key (inclusive), the last chunk unbounded above — which can only
// make a correct run fail O2, never make a wrong one pass. The scope is the
// whole key space; the base is unknown (from-reads); the frontier is the last
// log position. Evidence the converter cannot interpret (other ops, a
// snapshot row outside a window, a delete without a before image) is
// returned as an Unsupported failure; err is for reading and writing only.
//
// The converter holds the recording in memory (the bundle lists the reads
// before the log); the verifier itself streams.
func FromDebezium(r io.Reader, w io.Writer, opt DebeziumOptions) (*Failure, error) {
	if opt.SignalTable == "" {
		opt.SignalTable = "debezium_signal"
	}
	if opt.Key == "" {
		opt.Key = "id"
	}
	if opt.Position == "" {
		opt.Position = "lsn"
	}
	c := &dbzConverter{opt: opt}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		c.line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if f := c.record(sc.Bytes()); f != nil {
			return f, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if c.open != nil {
		return unsupported("snapshot-window-close", "chunk %q opens a window that never closes", c.open.id), nil
	}
	return nil, c.write(w)
}

type dbzEnvelope struct {
	Payload *dbzEnvelope               `json:"payload"`
	Op      string                     `json:"op"`
	Before  map[string]json.RawMessage `json:"before"`
	After   map[string]json.RawMessage `json:"after"`
	Source  map[string]json.RawMessage `json:"source"`
}

type dbzChunk struct {
	id     string
	lo, hi int64
	rng    *RangeSpec
	rows   [][2]json.RawMessage // key, row image, as delivered at the close
}

type dbzConverter struct {
	opt     DebeziumOptions
	line    int
	log     []string // bundle lines of the log, interleaved with delivered entries
	pos     int64
	lastSrc json.RawMessage
	open    *dbzChunk
	closed  *dbzChunk // the last closed chunk: delivers its survivors
	chunks  []*dbzChunk
	integer bool
	kinded  bool
}

func (c *dbzConverter) fail(field, format string, a ...any) *Failure {
	f := unsupported(field, format, a...)
	f.Line = int64(c.line)
	return f
}

func (c *dbzConverter) record(line []byte) *Failure {
	var env dbzEnvelope
	if err := json.Unmarshal(line, &env); err != nil {
		return s1(int64(c.line), "not a change event: %v", err)
	}
	if env.Payload != nil {
		env = *env.Payload
	}
	table := ""
	if raw, ok := env.Source["table"]; ok {
		json.Unmarshal(raw, &table)
	}
	if table == c.opt.SignalTable {
		return c.signal(&env)
	}
	if c.opt.Table != "" && table != c.opt.Table {
		return c.marker(&env) // another table: a log position outside the scope
	}
	switch env.Op {
	case "c", "u", "d":
		img := env.After
		if env.Op == "d" {
			img = env.Before
			if img == nil {
				return c.fail("before", "a delete without a before image: its key is unknown")
			}
		}
		if img == nil {
			return c.fail("after", "a %q event without an after image (a delta cannot be replayed)", env.Op)
		}
		k, f := c.key(img)
		if f != nil {
			return f
		}
		if f := c.advance(&env); f != nil {
			return f
		}
		v := "null"
		if env.Op != "d" {
			v = canonRow(env.After)
		}
		c.log = append(c.log, fmt.Sprintf(`{"p":%d,"k":%s,"v":%s}`, c.pos, k, v),
			fmt.Sprintf(`{"out":%s,"v":%s,"tag":%d}`, k, v, c.pos))
		return nil
	case "r":
		snap := ""
		if raw, ok := env.Source["snapshot"]; ok {
			json.Unmarshal(raw, &snap)
		}
		if snap != "incremental" {
			return c.fail("source.snapshot", "a snapshot read of kind %q: only incremental-snapshot chunks have watermark brackets", snap)
		}
		if c.closed == nil || c.open != nil {
			return c.fail("op", "an incremental-snapshot row delivered outside a closed window")
		}
		if env.After == nil {
			return c.fail("after", "a snapshot row without an after image")
		}
		k, f := c.key(env.After)
		if f != nil {
			return f
		}
		ch := c.closed
		ch.rows = append(ch.rows, [2]json.RawMessage{json.RawMessage(k), json.RawMessage(canonRow(env.After))})
		c.log = append(c.log, fmt.Sprintf(`{"out":%s,"v":%s,"tag":%d}`, k, canonRow(env.After), ch.hi))
		return nil
	}
	return c.fail("op", "operation %q is not a row change (c, u, d) or an incremental-snapshot read (r)", env.Op)
}

// advance gives the event the next log position, checking that the source
// position does not go backwards.
func (c *dbzConverter) advance(env *dbzEnvelope) *Failure {
	if src, ok := env.Source[c.opt.Position]; ok {
		if c.lastSrc != nil && lessPosition(src, c.lastSrc) {
			return s1(int64(c.line), "source.%s %s is before the previous %s: the recording is not in commit order", c.opt.Position, src, c.lastSrc)
		}
		c.lastSrc = src
	}
	c.pos++
	return nil
}

func lessPosition(a, b json.RawMessage) bool {
	var x, y json.Number
	if json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil {
		fx, e1 := x.Float64()
		fy, e2 := y.Float64()
		if e1 == nil && e2 == nil {
			return fx < fy
		}
	}
	return string(a) < string(b)
}

func (c *dbzConverter) marker(env *dbzEnvelope) *Failure {
	if f := c.advance(env); f != nil {
		return f
	}
	c.log = append(c.log, fmt.Sprintf(`{"p":%d}`, c.pos))
	return nil
}

func (c *dbzConverter) signal(env *dbzEnvelope) *Failure {
	if env.After == nil {
		return c.marker(env)
	}
	var id, typ, data string
	json.Unmarshal(env.After["id"], &id)
	json.Unmarshal(env.After["type"], &typ)
	json.Unmarshal(env.After["data"], &data)
	if f := c.marker(env); f != nil {
		return f
	}
	switch typ {
	case "snapshot-window-open":
		if c.open != nil {
			return c.fail("snapshot-window-open", "chunk %q opens while chunk %q is open", id, c.open.id)
		}
		ch := &dbzChunk{id: strings.TrimSuffix(id, "-open"), lo: c.pos}
		if data != "" {
			var d struct {
				Range *RangeSpec `json:"range"`
			}
			if json.Unmarshal([]byte(data), &d) == nil {
				ch.rng = d.Range
			}
		}
		c.open, c.closed = ch, nil
	case "snapshot-window-close":
		if c.open == nil || strings.TrimSuffix(id, "-close") != c.open.id {
			return c.fail("snapshot-window-close", "window close %q without its open", id)
		}
		c.open.hi = c.pos
		c.chunks = append(c.chunks, c.open)
		c.closed, c.open = c.open, nil
	}
	return nil
}

// key returns the row's primary key as bundle JSON.
func (c *dbzConverter) key(row map[string]json.RawMessage) (string, *Failure) {
	raw, ok := row[c.opt.Key]
	if !ok {
		return "", c.fail(c.opt.Key, "the row has no key column %q", c.opt.Key)
	}
	raw = bytes.TrimSpace(raw)
	integer := len(raw) > 0 && raw[0] != '"'
	if !c.kinded {
		c.integer, c.kinded = integer, true
	} else if integer != c.integer {
		return "", c.fail(c.opt.Key, "key %s: keys mix strings and numbers", raw)
	}
	if integer {
		if _, err := parseInt(raw); err != nil {
			return "", c.fail(c.opt.Key, "key %s is not an integer", raw)
		}
	}
	return string(raw), nil
}

// canonRow is a row image with its columns in name order.
func canonRow(row map[string]json.RawMessage) string {
	b, _ := json.Marshal(row) // map keys are sorted; raw values are compacted
	return string(b)
}

func (c *dbzConverter) write(w io.Writer) error {
	keys := "string"
	if c.integer {
		keys = "integer"
	}
	all := ScopeSpec{Ranges: []RangeSpec{{}}}
	h := Header{Format: Format, Version: Version, Coordinates: "position", Keys: keys, Base: "from-reads",
		Discipline: WindowDiscard, Reads: "survivors",
		Certificate: Certificate{Scope: all, Frontier: c.pos},
		Run:         Run{Scope: all, Start: 0, Consumed: c.pos},
	}
	var prev json.RawMessage
	for i, ch := range c.chunks {
		lo, hi := ch.lo, ch.hi
		u := UnitSpec{Lo: &lo, Hi: &hi}
		switch {
		case ch.rng != nil:
			u.Domain = ScopeSpec{Ranges: []RangeSpec{*ch.rng}}
		default:
			r := RangeSpec{Gt: prev}
			if i < len(c.chunks)-1 && len(ch.rows) > 0 {
				r.Le = ch.rows[len(ch.rows)-1][0]
			}
			if i < len(c.chunks)-1 && len(ch.rows) == 0 {
				r.Le = prev // an empty chunk
				if prev == nil {
					r.Lt, r.Le = json.RawMessage(`""`), nil
					if c.integer {
						r.Lt = json.RawMessage("-9223372036854775808")
					}
				}
			}
			u.Domain = ScopeSpec{Ranges: []RangeSpec{r}}
		}
		if u.Domain.Ranges[0].Le != nil {
			prev = u.Domain.Ranges[0].Le
		}
		h.Units = append(h.Units, u)
	}
	if len(h.Units) == 0 {
		zero := int64(0)
		h.Units = []UnitSpec{{Domain: all, Lo: &zero, Hi: &zero}}
	}
	bw := bufio.NewWriter(w)
	head, err := json.Marshal(h)
	if err != nil {
		return err
	}
	bw.Write(head)
	bw.WriteByte('\n')
	for i, ch := range c.chunks {
		for _, row := range ch.rows {
			fmt.Fprintf(bw, `{"read":%d,"k":%s,"v":%s}`+"\n", i+1, row[0], row[1])
		}
	}
	for _, l := range c.log {
		bw.WriteString(l)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
