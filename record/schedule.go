package record

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Schedule is a model counterexample (check --trace-json) to drive a real
// run through, step by step: the trace's base store becomes rows inserted
// before the slot exists, each commit its transaction, each watermark a
// signal row, each chunk read a select, and the consumer takes a position
// only when the schedule says so. Model key k is primary key k, model value
// v is column v, ⊥ an absent row.
type Schedule struct {
	Property, Reason string
	Steps            []schedStep
}

type schedStep struct {
	Action string `json:"action"`
	View   struct {
		Log []struct {
			Pos    int64  `json:"pos"`
			Marker string `json:"marker"`
			Key    int    `json:"key"`
			Value  int    `json:"value"`
			Txn    int    `json:"txn"`
		} `json:"log"`
		Units []struct {
			Keys  []int64         `json:"keys"`
			Reads json.RawMessage `json:"reads"`
		} `json:"units"`
		Consumed int64 `json:"consumed"`
		Start    int64 `json:"start"`
		Source   []struct {
			Key   int64 `json:"key"`
			Value int   `json:"value"`
		} `json:"source"`
	} `json:"view"`
}

// ReadSchedule reads a counterexample trace written by check --trace-json.
func ReadSchedule(r io.Reader) (*Schedule, error) {
	var t struct {
		Property string      `json:"property"`
		Reason   string      `json:"reason"`
		Steps    []schedStep `json:"steps"`
	}
	dec := json.NewDecoder(r)
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("not a trace written by check --trace-json: %v", err)
	}
	if len(t.Steps) < 2 || len(t.Steps[0].View.Source) == 0 {
		return nil, fmt.Errorf("not a trace written by check --trace-json: no steps or no source store")
	}
	// Only the classic capture's steps have a counterpart here; a trace of
	// another protocol would be replayed as something it is not.
	for n, st := range t.Steps[1:] {
		known := false
		for _, p := range classicSteps {
			known = known || strings.HasPrefix(st.Action, p)
		}
		if !known {
			return nil, fmt.Errorf("step %d (%s) is not a step of the classic capture, the only one record replays", n+1, st.Action)
		}
	}
	return &Schedule{Property: t.Property, Reason: t.Reason, Steps: t.Steps}, nil
}

var classicSteps = []string{"source commits ", "write low watermark for chunk ", "write high watermark for chunk ",
	"read chunk ", "consume position ", "consumer's start moves past position "}

// keys is the number of keys of the trace's model.
func (s *Schedule) keys() int64 { return int64(len(s.Steps[0].View.Source)) }

// createTable makes the replay's table and inserts the trace's base store,
// before the slot exists (so the log starts after it, as in the model).
func (s *Schedule) createTable(ctx context.Context, c *pgx.Conn, name string) error {
	var exists bool
	if err := c.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", quoteQualified(name)).Scan(&exists); err != nil {
		return ioErr("looking up table %s: %v", name, pgMsg(err))
	}
	if exists {
		return usageErr("table %s exists: --schedule creates its table (id bigint primary key, v integer) from the trace's base store; name a new one", name)
	}
	q := quoteQualified(name)
	if _, err := c.Exec(ctx, "CREATE TABLE "+q+" (id bigint PRIMARY KEY, v integer)"); err != nil {
		return ioErr("creating table %s: %v", name, pgMsg(err))
	}
	for _, e := range s.Steps[0].View.Source {
		if e.Value != 0 {
			if _, err := c.Exec(ctx, "INSERT INTO "+q+" VALUES ($1, $2)", e.Key, e.Value); err != nil {
				return ioErr("inserting the base store: %v", pgMsg(err))
			}
		}
	}
	return nil
}

// replay drives the run through the schedule, then consumes what the log
// still holds, so the sink is at rest, and compares it with the table.
func (c *capture) replay(ctx context.Context, s *Schedule) error {
	c.lateStart = false // the trace's own start moves say where consumption starts
	c.maxKey = intKey(s.keys() - 1)
	c.stats.MaxKey = c.maxKey.json
	c.sink = map[string][]byte{}
	prev := &s.Steps[0]
	store := map[int64]int{}
	for _, e := range prev.View.Source {
		store[e.Key] = e.Value
	}
	for n := 1; n < len(s.Steps); n++ {
		st := &s.Steps[n]
		fail := func(format string, a ...any) error {
			return usageErr("schedule step %d (%s): %s", n, st.Action, fmt.Sprintf(format, a...))
		}
		switch {
		case len(st.View.Log) > len(prev.View.Log):
			added := st.View.Log[len(prev.View.Log):]
			if m := added[0].Marker; m != "" {
				i, err := strconv.Atoi(m[1:])
				if len(added) != 1 || err != nil || (m[0] != 'L' && m[0] != 'H') {
					return fail("cannot drive the log entry %q", m)
				}
				if m[0] == 'L' {
					if err := c.planUnit(i, st.View.Units); err != nil {
						return fail("%v", err)
					}
					if err := c.writeLow(ctx, i); err != nil {
						return err
					}
				} else if err := c.writeHigh(ctx, i); err != nil {
					return err
				}
				break
			}
			// one transaction: its rows in the trace's order
			tx, err := c.s.sql.Begin(ctx)
			if err != nil {
				return c.s.dbErr(ctx, "starting a transaction", err)
			}
			for _, e := range added {
				k, v := int64(e.Key), e.Value
				var q string
				var args []any
				switch {
				case v == 0 && store[k] == 0:
					tx.Rollback(ctx)
					return fail("deletes the absent key %d, which PostgreSQL logs as nothing: the trace cannot be driven", k)
				case v == 0:
					q, args = "DELETE FROM "+c.tab.qname+" WHERE id = $1", []any{k}
				case store[k] == 0:
					q, args = "INSERT INTO "+c.tab.qname+" VALUES ($1, $2)", []any{k, v}
				default:
					q, args = "UPDATE "+c.tab.qname+" SET v = $2 WHERE id = $1", []any{k, v}
				}
				if _, err := tx.Exec(ctx, q, args...); err != nil {
					tx.Rollback(ctx)
					return c.s.dbErr(ctx, "executing the trace's commit", err)
				}
				store[k] = v
			}
			if err := tx.Commit(ctx); err != nil {
				return c.s.dbErr(ctx, "committing the trace's transaction", err)
			}
		case readsChanged(prev, st):
			i := len(c.units)
			if i == 0 || c.units[i-1].read {
				return fail("a chunk read before its low watermark")
			}
			if err := c.readUnit(ctx, i); err != nil {
				return err
			}
		case st.View.Consumed > prev.View.Consumed:
			want := st.View.Consumed
			if st.View.Start > prev.View.Start {
				// S-OBS: a correct capture starts at or before every low edge
				for _, e := range st.View.Log {
					if e.Pos <= st.View.Start && strings.HasPrefix(e.Marker, "L") && c.fault != "late-start" {
						return fail("the consumer's start moves past the low watermark at position %d, which only a capture with --fault late-start does", e.Pos)
					}
				}
				c.start = st.View.Start // the consumer's start moves past this position: it is not consumed
			}
			got, err := c.consume(ctx)
			if err != nil {
				return err
			}
			if got.pos != want {
				return fail("the database's log reached position %d where the trace has %d", got.pos, want)
			}
		}
		prev = st
	}
	// The sink at rest: consume what the log still holds.
	for c.pos < int64(len(prev.View.Log)) {
		if _, err := c.consume(ctx); err != nil {
			return err
		}
	}
	return c.compare(ctx)
}

// intKey is the key of an integer.
func intKey(n int64) keyVal {
	s := strconv.FormatInt(n, 10)
	return keyVal{json: s, text: []string{s}}
}

func readsChanged(a, b *schedStep) bool {
	if len(a.View.Units) != len(b.View.Units) {
		return false
	}
	for i := range b.View.Units {
		if string(a.View.Units[i].Reads) != string(b.View.Units[i].Reads) {
			return true
		}
	}
	return false
}

// planUnit adds chunk i with the trace's domain, which must continue the
// plan's key order (the real plan is key ranges).
func (c *capture) planUnit(i int, units []struct {
	Keys  []int64         `json:"keys"`
	Reads json.RawMessage `json:"reads"`
}) error {
	if i != len(c.units)+1 || i > len(units) {
		return fmt.Errorf("chunk %d's low watermark out of order", i)
	}
	keys := slices.Clone(units[i-1].Keys)
	slices.Sort(keys)
	u := unit{lo: -1, hi: -1}
	from := int64(0)
	if i > 1 {
		prev := c.units[i-2].le
		n, _ := strconv.ParseInt(prev.json, 10, 64)
		u.gt, from = &prev, n+1
	}
	for j, k := range keys {
		if k != from+int64(j) {
			return fmt.Errorf("chunk %d's keys %v are not the next key range", i, keys)
		}
	}
	le := from + int64(len(keys)) - 1
	u.le = intKey(le)
	if max, _ := strconv.ParseInt(c.maxKey.json, 10, 64); le >= max {
		u.le, u.last = c.maxKey, true
	}
	c.units = append(c.units, u)
	c.stats.Chunks = len(c.units)
	c.cur = i
	return nil
}

// compare reads the table and sets Stats.Diff to the keys where the sink
// (the replay of every emitted entry) differs from it.
func (c *capture) compare(ctx context.Context) error {
	rows, err := c.s.sql.Query(ctx, "SELECT "+c.tab.selectList()+" FROM "+c.tab.qname+" ORDER BY id", textFormat)
	if err != nil {
		return c.s.dbErr(ctx, "reading the table", err)
	}
	table := map[string][]byte{}
	for rows.Next() {
		vals := rows.RawValues()
		k, err := c.tab.keyOf(vals)
		var img []byte
		if err == nil {
			img, err = c.tab.image(nil, vals)
		}
		if err != nil {
			rows.Close()
			return ioErr("%v", err)
		}
		table[k.json] = img
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return c.s.dbErr(ctx, "reading the table", err)
	}
	show := func(b []byte) string {
		if b == nil || string(b) == "null" {
			return "⊥"
		}
		return string(b)
	}
	max, _ := strconv.ParseInt(c.maxKey.json, 10, 64)
	for n := int64(0); n <= max; n++ {
		k := intKey(n).json
		t, s := table[k], c.sink[k]
		if show(t) == show(s) {
			continue
		}
		what := "a lost update"
		switch {
		case show(t) == "⊥":
			what = "a resurrected row"
		case show(s) == "⊥":
			what = "a lost row"
		}
		c.stats.Diff = append(c.stats.Diff, fmt.Sprintf("key %s: the table holds %s, the sink %s (%s)", k, show(t), show(s), what))
	}
	return nil
}
