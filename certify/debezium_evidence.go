package certify

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The evidence beside the recording that states what the change events do
// not: Debezium's incremental-snapshot notifications and the connector's
// Kafka Connect offsets.
//
// Debezium reads chunk k as pk > end(k-1) AND NOT pk > maximum key, ORDER BY
// pk LIMIT n, and end(k) is the last key it read (chunkEndPosition). Only the
// IN_PROGRESS notification, sent once per chunk that read a row, publishes it
// (last_processed_key), with the maximum key; TABLE_SCAN_COMPLETED with
// status SUCCEEDED says a read above the last end returned nothing, so the
// table is done. The offsets carry the maximum key too, but their
// incremental_snapshot_primary_key is the last key *sent* (lastEventKeySent),
// not the last read: it is no chunk end.

// dbzNotification is one notification record as the sink channel writes it.
type dbzNotification struct {
	Payload       *dbzNotification  `json:"payload"`
	AggregateType string            `json:"aggregate_type"`
	Type          string            `json:"type"`
	Data          map[string]string `json:"additional_data"`
}

// notifications reads the notifications of the table's snapshot and states
// the chunk ends, the maximum key and the table's completion. The records
// come in any dump format readDump reads (the sink channel's topic).
func (c *dbzConverter) notifications(r io.Reader) (*Failure, error) {
	var ends []dkey
	done := false
	f, err := readDump(r, "notifications", "notifications", func(rec dbzRecord) *Failure {
		fail := func(format string, a ...any) *Failure {
			f := unsupported("notifications", format, a...)
			f.Detail = fmt.Sprintf("notifications line %d: %s", rec.line, f.Detail)
			return f
		}
		if rec.value == nil {
			return nil
		}
		var n dbzNotification
		if err := json.Unmarshal(rec.value, &n); err != nil {
			return fail("not a notification: %v", err)
		}
		if n.Payload != nil {
			n = *n.Payload
		}
		if n.AggregateType != "Incremental Snapshot" {
			return nil
		}
		table := n.Data["current_collection_in_progress"]
		if n.Type == "TABLE_SCAN_COMPLETED" {
			table = n.Data["scanned_collection"]
		}
		if !c.collection(table) {
			return nil
		}
		switch n.Type {
		case "IN_PROGRESS":
			if done {
				return fail("a chunk after the table scan completed")
			}
			end, f := c.renderedKey(n.Data["last_processed_key"])
			if f != nil {
				return fail("last_processed_key: %s", f.Detail)
			}
			if k := len(ends); k > 0 && c.cmp(end, ends[k-1]) <= 0 {
				return fail("chunk end %s is not above the previous %s", c.keyJSON(end), c.keyJSON(ends[k-1]))
			}
			ends = append(ends, end)
			mk, f := c.renderedKey(n.Data["maximum_key"])
			if f != nil {
				return fail("maximum_key: %s", f.Detail)
			}
			return c.stateMax(mk, "notifications")
		case "TABLE_SCAN_COMPLETED":
			done = n.Data["status"] == "SUCCEEDED"
			// EMPTY: the maximum-key query found no row, in the first window
			c.empty = c.empty || n.Data["status"] == "EMPTY" && len(ends) == 0
		}
		return nil
	})
	if f != nil || err != nil {
		return f, err
	}
	c.placeEnds(ends, done)
	return nil, nil
}

// placeEnds gives the k-th stated end to the k-th window that read a row.
// A window that delivered no row may have read rows all discarded, or none
// (a retried chunk); the ends are placed only when the count decides it:
// as many ends as closed windows, or as windows that delivered rows.
func (c *dbzConverter) placeEnds(ends []dkey, done bool) {
	var closed, delivered []*dbzChunk
	for _, ch := range c.chunks {
		if ch.closed {
			closed = append(closed, ch)
			if ch.nrows > 0 {
				delivered = append(delivered, ch)
			}
		}
	}
	var to []*dbzChunk
	switch len(ends) {
	case 0:
		return
	case len(closed):
		to = closed
	case len(delivered):
		to = delivered
	default:
		c.notes = append(c.notes, fmt.Sprintf("the notifications state %d chunk ends for %d closed windows (%d delivering rows): they are not placed", len(ends), len(closed), len(delivered)))
		return
	}
	for i, ch := range to {
		e := ends[i]
		ch.stated = &e
	}
	// The scan completed in a window after the last chunk that read rows:
	// with one table, the last window of the recording.
	if last := closed[len(closed)-1]; done && last != to[len(to)-1] && last.nrows == 0 {
		last.completes = true
	}
}

// collection says whether a Debezium collection id (schema.table,
// db.table, db.schema.table; a bare table name) names the captured table:
// by its full name, so a table of the same name in another schema is not it.
func (c *dbzConverter) collection(id string) bool {
	t := c.table
	if t == "" {
		t = c.opt.Table
	}
	bare := t[strings.LastIndexByte(t, '.')+1:]
	return t != "" && (id == t || strings.HasSuffix(id, "."+t) || !strings.Contains(id, ".") && id == bare)
}

// renderedKey reads a key as notifications render it: the key columns'
// values joined by commas.
func (c *dbzConverter) renderedKey(s string) (dkey, *Failure) {
	parts := []string{s}
	if len(c.opt.Key) > 1 {
		parts = strings.Split(s, ",")
		if len(parts) != len(c.opt.Key) {
			return dkey{}, unsupported("notifications", "key %q does not split into %d column values", s, len(c.opt.Key))
		}
	}
	if len(c.colInt) != len(c.opt.Key) {
		return dkey{}, unsupported("notifications", "no row of the table was delivered, so the key columns' types are unknown")
	}
	var raws []json.RawMessage
	for i, p := range parts {
		if c.colInt[i] {
			if _, err := strconv.ParseInt(p, 10, 64); err != nil {
				return dkey{}, unsupported("notifications", "key %q is not an integer", s)
			}
			raws = append(raws, json.RawMessage(p))
		} else {
			raws = append(raws, jsonString(p))
		}
	}
	return c.keyOf(raws)
}

// stateMax records a stated maximum key; two different ones are two
// snapshots, or a contradiction.
func (c *dbzConverter) stateMax(k dkey, from string) *Failure {
	if c.maxKey != nil && c.cmp(*c.maxKey, k) != 0 {
		return unsupported(from, "maximum key %s, but %s elsewhere: not one snapshot", c.keyJSON(k), c.keyJSON(*c.maxKey))
	}
	c.maxKey = &k
	return nil
}

// offsets reads the connector's recorded Kafka Connect offsets for the
// maximum key of the table's snapshot: the Kafka Connect REST body (GET
// /connectors/{name}/offsets), or records in any dump format readDump reads
// (the offsets topic: key⇥value lines, kcat -J), each the offset map,
// {"key": …, "value": map} or [key, map].
func (c *dbzConverter) offsets(r io.Reader) (*Failure, error) {
	all, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var rest struct {
		Offsets []struct {
			Offset map[string]json.RawMessage `json:"offset"`
		} `json:"offsets"`
	}
	if json.Unmarshal(all, &rest) == nil && rest.Offsets != nil {
		for i, o := range rest.Offsets {
			if f := c.offset(o.Offset, i+1); f != nil {
				return f, nil
			}
		}
		return nil, nil
	}
	return readDump(bytes.NewReader(all), "offsets", "offsets", func(rec dbzRecord) *Failure {
		if rec.value == nil {
			return nil
		}
		var v map[string]json.RawMessage
		var pair []json.RawMessage
		var kv struct {
			Value map[string]json.RawMessage `json:"value"`
		}
		switch {
		case json.Unmarshal(rec.value, &pair) == nil && len(pair) == 2 && json.Unmarshal(pair[1], &v) == nil:
		case json.Unmarshal(rec.value, &kv) == nil && kv.Value != nil:
			v = kv.Value
		case json.Unmarshal(rec.value, &v) == nil:
		default:
			return unsupported("offsets", "offsets line %d: not an offset", rec.line)
		}
		return c.offset(v, rec.line)
	})
}

// offset reads one offset map: a snapshot's maximum key; a serialized null
// is the maximum-key query finding no row, an empty table.
func (c *dbzConverter) offset(v map[string]json.RawMessage, line int) *Failure {
	fail := func(format string, a ...any) *Failure {
		return unsupported("offsets", "offsets line %d: "+format, append([]any{line}, a...)...)
	}
	var cols, mk string
	json.Unmarshal(v["incremental_snapshot_collections"], &cols)
	json.Unmarshal(v["incremental_snapshot_maximum_key"], &mk)
	var list []map[string]any
	if cols == "" || mk == "" || json.Unmarshal([]byte(cols), &list) != nil || len(list) == 0 {
		return nil // no snapshot running
	}
	if id, _ := list[0]["incremental_snapshot_collections_id"].(string); !c.collection(id) {
		return nil // the maximum key is the current collection's
	}
	if mk == javaNull {
		c.empty = true
		return nil
	}
	parts, err := javaKey(mk)
	if err != nil {
		return fail("incremental_snapshot_maximum_key: %v", err)
	}
	if len(parts) != len(c.opt.Key) {
		return fail("a maximum key of %d columns for %d key columns", len(parts), len(c.opt.Key))
	}
	k, f := c.keyOf(parts)
	if f != nil {
		return fail("maximum key: %s", f.Detail)
	}
	return c.stateMax(k, "offsets")
}

// javaNull is java.io.ObjectOutputStream writing null, in hex.
const javaNull = "aced000570"

// javaKey decodes a key as Debezium stores it in offsets: the hex of
// java.io.ObjectOutputStream writing an Object[] of the key columns' values.
// Integer, Long, Short, Byte and String values are read; others are errors.
func javaKey(s string) ([]json.RawMessage, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, err
	}
	if len(b) < 4 || binary.BigEndian.Uint32(b) != 0xaced0005 {
		return nil, errors.New("not a Java serialization stream")
	}
	d := &javaDec{b: b, i: 4}
	v, err := d.content()
	if err == nil && d.i != len(b) {
		err = errors.New("trailing bytes")
	}
	if err != nil {
		return nil, err
	}
	out, ok := v.([]json.RawMessage)
	if !ok {
		return nil, errors.New("not an Object[]")
	}
	return out, nil
}

type javaClass struct {
	name   string
	flags  byte
	fields []byte // primitive type codes, in order
	super  *javaClass
}

type javaDec struct {
	b       []byte
	i       int
	handles []any
}

var errJava = errors.New("truncated or unsupported Java serialization")

func (d *javaDec) next(n int) ([]byte, error) {
	if n < 0 || d.i+n > len(d.b) {
		return nil, errJava
	}
	d.i += n
	return d.b[d.i-n : d.i], nil
}

func (d *javaDec) u16() (int, error) {
	b, err := d.next(2)
	if err != nil {
		return 0, err
	}
	return int(binary.BigEndian.Uint16(b)), nil
}

func (d *javaDec) utf() (string, error) {
	n, err := d.u16()
	if err != nil {
		return "", err
	}
	b, err := d.next(n)
	if err != nil {
		return "", err
	}
	// modified UTF-8: NUL is C0 80; supplementary characters are surrogate
	// pairs, refused rather than guessed.
	s := strings.ReplaceAll(string(b), "\xc0\x80", "\x00")
	if strings.Contains(s, "\xed") || !utf8.ValidString(s) {
		return "", errors.New("a string outside the Basic Multilingual Plane or not UTF-8")
	}
	return s, nil
}

func (d *javaDec) content() (any, error) {
	tc, err := d.next(1)
	if err != nil {
		return nil, err
	}
	switch tc[0] {
	case 0x70: // TC_NULL
		return nil, nil
	case 0x71: // TC_REFERENCE
		b, err := d.next(4)
		if err != nil {
			return nil, err
		}
		h := int(binary.BigEndian.Uint32(b)) - 0x7e0000
		if h < 0 || h >= len(d.handles) {
			return nil, errJava
		}
		return d.handles[h], nil
	case 0x72: // TC_CLASSDESC
		cl := &javaClass{}
		if cl.name, err = d.utf(); err != nil {
			return nil, err
		}
		if _, err = d.next(8); err != nil { // serialVersionUID
			return nil, err
		}
		d.handles = append(d.handles, cl)
		fb, err := d.next(1)
		if err != nil {
			return nil, err
		}
		cl.flags = fb[0]
		n, err := d.u16()
		if err != nil {
			return nil, err
		}
		for range n {
			code, err := d.next(1)
			if err != nil {
				return nil, err
			}
			if _, err := d.utf(); err != nil {
				return nil, err
			}
			if code[0] == 'L' || code[0] == '[' {
				return nil, fmt.Errorf("class %s has object fields", cl.name)
			}
			cl.fields = append(cl.fields, code[0])
		}
		if end, err := d.next(1); err != nil || end[0] != 0x78 { // TC_ENDBLOCKDATA
			return nil, errJava
		}
		sup, err := d.content()
		if err != nil {
			return nil, err
		}
		if sup != nil {
			if cl.super, _ = sup.(*javaClass); cl.super == nil {
				return nil, errJava
			}
		}
		return cl, nil
	case 0x74: // TC_STRING
		s, err := d.utf()
		if err != nil {
			return nil, err
		}
		v := jsonString(s)
		d.handles = append(d.handles, v)
		return v, nil
	case 0x73: // TC_OBJECT
		cl, err := d.class()
		if err != nil {
			return nil, err
		}
		h := len(d.handles)
		d.handles = append(d.handles, nil)
		var chain []*javaClass
		for k := cl; k != nil; k = k.super {
			chain = append([]*javaClass{k}, chain...)
		}
		var num int64
		for _, k := range chain {
			if k.flags&0x01 != 0 { // SC_WRITE_METHOD: custom data
				return nil, fmt.Errorf("class %s writes custom data", k.name)
			}
			for _, code := range k.fields {
				size := map[byte]int{'B': 1, 'Z': 1, 'C': 2, 'S': 2, 'I': 4, 'F': 4, 'J': 8, 'D': 8}[code]
				b, err := d.next(size)
				if err != nil || size == 0 {
					return nil, errJava
				}
				switch code {
				case 'B':
					num = int64(int8(b[0]))
				case 'S':
					num = int64(int16(binary.BigEndian.Uint16(b)))
				case 'I':
					num = int64(int32(binary.BigEndian.Uint32(b)))
				case 'J':
					num = int64(binary.BigEndian.Uint64(b))
				}
			}
		}
		switch cl.name {
		case "java.lang.Integer", "java.lang.Long", "java.lang.Short", "java.lang.Byte":
		default:
			return nil, fmt.Errorf("a key value of class %s", cl.name)
		}
		v := json.RawMessage(strconv.FormatInt(num, 10))
		d.handles[h] = v
		return v, nil
	case 0x75: // TC_ARRAY
		cl, err := d.class()
		if err != nil {
			return nil, err
		}
		if cl.name != "[Ljava.lang.Object;" {
			return nil, fmt.Errorf("an array of %s", cl.name)
		}
		h := len(d.handles)
		d.handles = append(d.handles, nil)
		b, err := d.next(4)
		if err != nil {
			return nil, err
		}
		n := int(binary.BigEndian.Uint32(b))
		if n > len(d.b) {
			return nil, errJava
		}
		out := make([]json.RawMessage, 0, n)
		for range n {
			v, err := d.content()
			if err != nil {
				return nil, err
			}
			raw, ok := v.(json.RawMessage)
			if !ok {
				return nil, errors.New("a null or nested key value")
			}
			out = append(out, raw)
		}
		d.handles[h] = out
		return out, nil
	}
	return nil, fmt.Errorf("type code %#x", tc[0])
}

func (d *javaDec) class() (*javaClass, error) {
	v, err := d.content()
	if err != nil {
		return nil, err
	}
	cl, ok := v.(*javaClass)
	if !ok {
		return nil, errJava
	}
	return cl, nil
}
