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

	"github.com/cutcheck/cutcheck/certify"
)

// column is one column of a captured table.
type column struct {
	name    string
	codec   *codec
	sqlType string // format_type of the column, to cast a parameter's text to it
	collate bool   // a collation other than byte order: the chunks order it COLLATE "C", certify's order
	notNull bool
}

// table is a captured table: its columns in attribute order, its key
// columns in key order (none: no primary key) and the order its images are
// written in.
type table struct {
	schema, name, qname string
	cols                []column
	key                 []int
	intKey              bool  // one key column rendered as an integer: the bundle's keys are "integer"
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

func quoteIdent(s string) string { return pgx.Identifier{s}.Sanitize() }

func quoteQualified(name string) string {
	if i := strings.IndexByte(name, '.'); i >= 0 {
		return pgx.Identifier{name[:i], name[i+1:]}.Sanitize()
	}
	return quoteIdent(name)
}

// inspect reads a table's columns, their types and its key: keyCols when
// given (a unique not-null key, as Debezium's message.key.columns names
// one), else the primary key.
func inspect(ctx context.Context, c *pgx.Conn, name string, keyCols []string) (*table, error) {
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
	t := &table{schema: schema, name: rel, qname: pgx.Identifier{schema, rel}.Sanitize()}
	type att struct {
		typ    uint32
		typmod int32
	}
	var atts []att
	// collate: a collation other than C or POSIX, which already order as bytes
	// (and keep the column's index usable for the chunks)
	rows, err := c.Query(ctx, `SELECT a.attname, a.atttypid, a.atttypmod, format_type(a.atttypid, a.atttypmod),
			a.attcollation <> 0 AND COALESCE((SELECT CASE WHEN co.collname = 'default' THEN d.datcollate ELSE co.collcollate END
				FROM pg_collation co, pg_database d WHERE co.oid = a.attcollation AND d.datname = current_database()), '') NOT IN ('C', 'POSIX'),
			a.attnotnull
		FROM pg_attribute a WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, oid)
	if err != nil {
		return nil, ioErr("reading the columns of %s: %v", t.qname, pgMsg(err))
	}
	for rows.Next() {
		var col column
		var a att
		if err := rows.Scan(&col.name, &a.typ, &a.typmod, &col.sqlType, &col.collate, &col.notNull); err != nil {
			return nil, ioErr("reading the columns of %s: %v", t.qname, pgMsg(err))
		}
		t.cols = append(t.cols, col)
		atts = append(atts, a)
	}
	if err := rows.Err(); err != nil {
		return nil, ioErr("reading the columns of %s: %v", t.qname, pgMsg(err))
	}
	for i := range t.cols {
		cd, err := resolve(ctx, c, atts[i].typ, atts[i].typmod, 0)
		if err != nil {
			var ue *unsupportedType
			if errors.As(err, &ue) {
				return nil, usageErr("table %s: column %s has type %s, which record cannot render (%s)", t.qname, t.cols[i].name, t.cols[i].sqlType, ue.why)
			}
			return nil, ioErr("reading the type of %s.%s: %v", t.qname, t.cols[i].name, pgMsg(err))
		}
		t.cols[i].codec = cd
	}
	if err := t.findKey(ctx, c, oid, keyCols); err != nil {
		return nil, err
	}
	t.order = make([]int, len(t.cols))
	for i := range t.order {
		t.order[i] = i
	}
	sort.Slice(t.order, func(a, b int) bool { return t.cols[t.order[a]].name < t.cols[t.order[b]].name })
	return t, nil
}

// findKey sets the key columns: the named ones, which must be the columns
// of a unique index and not null, or the primary key's in its order.
func (t *table) findKey(ctx context.Context, c *pgx.Conn, oid uint32, keyCols []string) error {
	rows, err := c.Query(ctx, `SELECT i.indisprimary, array_agg(a.attname ORDER BY u.ord)
		FROM pg_index i CROSS JOIN unnest(i.indkey) WITH ORDINALITY u(attnum, ord)
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = u.attnum
		WHERE i.indrelid = $1 AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL
		GROUP BY i.indexrelid, i.indisprimary`, oid)
	if err != nil {
		return ioErr("reading the indexes of %s: %v", t.qname, pgMsg(err))
	}
	var primary []string
	var unique [][]string
	for rows.Next() {
		var pk bool
		var cols []string
		if err := rows.Scan(&pk, &cols); err != nil {
			return ioErr("reading the indexes of %s: %v", t.qname, pgMsg(err))
		}
		if pk {
			primary = cols
		}
		unique = append(unique, cols)
	}
	if err := rows.Err(); err != nil {
		return ioErr("reading the indexes of %s: %v", t.qname, pgMsg(err))
	}
	names := primary
	if len(keyCols) > 0 {
		names = keyCols
		found := false
		for _, u := range unique {
			found = found || sameSet(u, keyCols)
		}
		if !found {
			return usageErr("table %s: --key %s is not the columns of a unique index", t.qname, strings.Join(keyCols, ","))
		}
	}
	for _, n := range names {
		i := t.col(n)
		switch {
		case i < 0:
			return usageErr("table %s has no column %q (--key)", t.qname, n)
		case !t.cols[i].notNull:
			return usageErr("table %s: key column %s may be null; a key must be NOT NULL", t.qname, n)
		}
		if why := keyable(t.cols[i].codec); why != "" {
			return usageErr("table %s: key column %s has type %s, which record cannot order as certify does: %s", t.qname, n, t.cols[i].sqlType, why)
		}
		t.key = append(t.key, i)
	}
	t.intKey = len(t.key) == 1 && intKeyed(t.cols[t.key[0]].codec)
	return nil
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		found := false
		for _, y := range b {
			found = found || x == y
		}
		if !found {
			return false
		}
	}
	return true
}

func pgMsg(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message + " (" + pe.Code + ")"
	}
	return rootCause(err).Error()
}

// image renders a row (each column's text form, nil for NULL) as a JSON
// object with its members sorted by name, as the certify converter writes.
func (t *table) image(b []byte, vals [][]byte) ([]byte, error) {
	b = append(b, '{')
	for j, i := range t.order {
		if j > 0 {
			b = append(b, ',')
		}
		b = appendString(b, t.cols[i].name)
		b = append(b, ':')
		var err error
		if b, err = t.cols[i].codec.render(b, vals[i]); err != nil {
			return nil, fmt.Errorf("column %s: %v", t.cols[i].name, err)
		}
	}
	return append(b, '}'), nil
}

// keyVal is a row's key: as the bundle writes it (JSON) and as its key
// columns' text forms, to bound a chunk's select.
type keyVal struct {
	json string
	text []string
}

// keyOf is the key of a row's text forms.
func (t *table) keyOf(vals [][]byte) (keyVal, error) {
	parts := make([]certify.KeyPart, len(t.key))
	k := keyVal{text: make([]string, len(t.key))}
	for j, i := range t.key {
		if vals[i] == nil {
			return k, fmt.Errorf("key column %s is null", t.cols[i].name)
		}
		p, err := keyPart(t.cols[i].codec, vals[i])
		if err != nil {
			return k, fmt.Errorf("key column %s: %v", t.cols[i].name, err)
		}
		parts[j], k.text[j] = p, string(vals[i])
	}
	s, n, integer := certify.EncodeKey(parts)
	if integer {
		k.json = strconv.FormatInt(n, 10)
	} else {
		q, _ := json.Marshal(s)
		k.json = string(q)
	}
	return k, nil
}

// noteKey is a key as the incremental-snapshot notifications write it:
// each key column's Debezium value (a string's content, else its JSON),
// joined by commas.
func (t *table) noteKey(k keyVal) string {
	var parts []string
	for j, i := range t.key {
		b, err := t.cols[i].codec.render(nil, []byte(k.text[j]))
		var s string
		if err != nil || json.Unmarshal(b, &s) != nil {
			s = string(b)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}

// selectList names every column; the select asks for text results.
func (t *table) selectList() string {
	var s []string
	for _, c := range t.cols {
		s = append(s, quoteIdent(c.name))
	}
	return strings.Join(s, ", ")
}

// keyOrder is the key columns as the chunks order them: COLLATE "C" on
// collatable ones, so PostgreSQL's order is certify's byte order.
func (t *table) keyOrder(dir string) string {
	var s []string
	for _, i := range t.key {
		e := quoteIdent(t.cols[i].name)
		if t.cols[i].collate {
			e += ` COLLATE "C"`
		}
		s = append(s, e+dir)
	}
	return strings.Join(s, ", ")
}

// keyCmp is a row comparison of the key with parameters from n on, each a
// key column's text cast to its type: (a, b) > ($1::text::int, $2::text::text).
func (t *table) keyCmp(op string, n int) string {
	var p []string
	for j, i := range t.key {
		p = append(p, "$"+strconv.Itoa(n+j)+"::text::"+t.cols[i].sqlType)
	}
	return "(" + t.keyOrder("") + ") " + op + " (" + strings.Join(p, ", ") + ")"
}

// textFormat asks for every result column in text, the output function's
// form that pgoutput sends too.
var textFormat = pgx.QueryResultFormats{pgx.TextFormatCode}

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
