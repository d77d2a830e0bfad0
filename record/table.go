package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// column is one column of a captured table.
type column struct {
	name string
	typ  string // pg_type.typname
}

// table is a captured table: its columns in attribute order, its primary key
// (an integer column, -1 for none) and the order its images are written in.
type table struct {
	schema, name, qname string
	cols                []column
	pk                  int
	order               []int // column indexes by name: images are JSON objects with sorted members
}

func (t *table) col(name string) int {
	for i, c := range t.cols {
		if c.name == name {
			return i
		}
	}
	return -1
}

// renderable are the types whose text form this package writes as JSON the
// way Debezium does (integers and booleans as JSON numbers and booleans,
// strings as strings); anything else is refused rather than guessed.
var renderable = map[string]bool{"int2": true, "int4": true, "int8": true, "bool": true, "text": true, "varchar": true, "bpchar": true}

func quoteIdent(s string) string { return pgx.Identifier{s}.Sanitize() }

func quoteQualified(name string) string {
	if i := strings.IndexByte(name, '.'); i >= 0 {
		return pgx.Identifier{name[:i], name[i+1:]}.Sanitize()
	}
	return quoteIdent(name)
}

// inspect reads a table's columns and primary key.
func inspect(ctx context.Context, c *pgx.Conn, name string) (*table, error) {
	var oid uint32
	var schema, rel string
	err := c.QueryRow(ctx, `SELECT c.oid, n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.oid = to_regclass($1)`, quoteQualified(name)).Scan(&oid, &schema, &rel)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, usageErr("table %s does not exist", name)
	}
	if err != nil {
		return nil, ioErr("looking up table %s: %v", name, pgMsg(err))
	}
	t := &table{schema: schema, name: rel, qname: pgx.Identifier{schema, rel}.Sanitize(), pk: -1}
	rows, err := c.Query(ctx, `SELECT a.attname, t.typname, COALESCE(i.indisprimary, false)
		FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
		LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary AND a.attnum = ANY(i.indkey)
		WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, oid)
	if err != nil {
		return nil, ioErr("reading the columns of %s: %v", t.qname, pgMsg(err))
	}
	var pks []int
	for rows.Next() {
		var col column
		var pk bool
		if err := rows.Scan(&col.name, &col.typ, &pk); err != nil {
			return nil, ioErr("reading the columns of %s: %v", t.qname, pgMsg(err))
		}
		if pk {
			pks = append(pks, len(t.cols))
		}
		t.cols = append(t.cols, col)
	}
	if err := rows.Err(); err != nil {
		return nil, ioErr("reading the columns of %s: %v", t.qname, pgMsg(err))
	}
	for _, col := range t.cols {
		if !renderable[col.typ] {
			return nil, usageErr("table %s: column %s has type %s, which record cannot render (supported: smallint, integer, bigint, boolean, text, varchar, char)", t.qname, col.name, col.typ)
		}
	}
	switch {
	case len(pks) > 1:
		return nil, usageErr("table %s has a composite primary key; record chunks by a single integer key", t.qname)
	case len(pks) == 1:
		t.pk = pks[0]
	}
	t.order = make([]int, len(t.cols))
	for i := range t.order {
		t.order[i] = i
	}
	sort.Slice(t.order, func(a, b int) bool { return t.cols[t.order[a]].name < t.cols[t.order[b]].name })
	return t, nil
}

func pgMsg(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message + " (" + pe.Code + ")"
	}
	return rootCause(err).Error()
}

// value renders one column's text form as JSON; nil is SQL NULL.
func (t *table) value(b []byte, i int, text []byte) ([]byte, error) {
	if text == nil {
		return append(b, "null"...), nil
	}
	switch t.cols[i].typ {
	case "int2", "int4", "int8":
		if _, err := strconv.ParseInt(string(text), 10, 64); err != nil {
			return nil, fmt.Errorf("column %s: %q is not an integer", t.cols[i].name, text)
		}
		return append(b, text...), nil
	case "bool":
		if len(text) == 1 && text[0] == 't' {
			return append(b, "true"...), nil
		}
		return append(b, "false"...), nil
	}
	s, _ := json.Marshal(string(text))
	return append(b, s...), nil
}

// image renders a row (each column's text form, nil for NULL) as a JSON
// object with its members sorted by name, as the certify converter writes.
func (t *table) image(b []byte, vals [][]byte) ([]byte, error) {
	b = append(b, '{')
	for j, i := range t.order {
		if j > 0 {
			b = append(b, ',')
		}
		n, _ := json.Marshal(t.cols[i].name)
		b = append(b, n...)
		b = append(b, ':')
		var err error
		if b, err = t.value(b, i, vals[i]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// selectList selects every column as text, so the chunk read and the change
// stream render a row from the same text form.
func (t *table) selectList() string {
	var s []string
	for i, c := range t.cols {
		// aliased: ORDER BY the key must sort the key, not its text
		s = append(s, quoteIdent(c.name)+"::text AS c"+strconv.Itoa(i))
	}
	return strings.Join(s, ", ")
}

// populate creates the demonstration table with keys 1..n if it is missing.
func populate(ctx context.Context, c *pgx.Conn, name string, n int) error {
	var exists bool
	if err := c.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", quoteQualified(name)).Scan(&exists); err != nil {
		return ioErr("looking up table %s: %v", name, pgMsg(err))
	}
	if exists {
		return nil
	}
	q := quoteQualified(name)
	if _, err := c.Exec(ctx, "CREATE TABLE "+q+" (id bigint PRIMARY KEY, v integer, s text)"); err != nil {
		return ioErr("creating table %s: %v", name, pgMsg(err))
	}
	if _, err := c.Exec(ctx, "INSERT INTO "+q+" SELECT g, g % 4, 'row ' || g FROM generate_series(1, $1::bigint) g", n); err != nil {
		return ioErr("populating table %s: %v", name, pgMsg(err))
	}
	return nil
}
