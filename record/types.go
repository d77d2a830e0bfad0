package record

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/cutcheck/cutcheck/certify"
)

// unsupportedType is a column type record does not render.
type unsupportedType struct{ why string }

func (e *unsupportedType) Error() string { return e.why }

// builtin are the built-in types by the kind that renders them.
var builtin = map[string]kind{
	"int2": kInt, "int4": kInt, "int8": kInt, "oid": kInt,
	"float4": kFloat, "float8": kFloat, "money": kMoney, "bool": kBool,
	"text": kString, "varchar": kString, "bpchar": kString, "name": kString, "char": kString,
	"json": kString, "jsonb": kString, "xml": kString, "uuid": kString,
	"inet": kString, "cidr": kString, "macaddr": kString, "macaddr8": kString, "pg_lsn": kString,
	"bytea": kBytea, "date": kDate, "time": kTime, "timetz": kTimeTZ,
	"timestamp": kTimestamp, "timestamptz": kTimestampTZ, "interval": kInterval,
}

// resolve reads how to render a type: a built-in one, an array of a
// renderable element, an enum, a domain (as its base type, as Debezium
// does), a range or a composite type (their text forms, as strings).
func resolve(ctx context.Context, c *pgx.Conn, oid uint32, typmod int32, depth int) (*codec, error) {
	if depth > 8 {
		return nil, &unsupportedType{"types nested too deep"}
	}
	var name, ns, typtype, category string
	var elem, base, relid uint32
	var typtypmod int32
	var delim string
	err := c.QueryRow(ctx, `SELECT t.typname, n.nspname, t.typtype, t.typcategory, t.typelem, t.typbasetype, t.typtypmod, t.typdelim::text, t.typrelid
		FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE t.oid = $1`, oid).
		Scan(&name, &ns, &typtype, &category, &elem, &base, &typtypmod, &delim, &relid)
	if err != nil {
		return nil, err
	}
	cd := &codec{typ: name, base: name, prec: -1, delim: ','}
	if len(delim) == 1 {
		cd.delim = delim[0]
	}
	switch {
	case typtype == "d":
		if typmod < 0 {
			typmod = typtypmod
		}
		b, err := resolve(ctx, c, base, typmod, depth+1)
		if err != nil {
			return nil, err
		}
		named := *b
		named.typ = name
		return &named, nil
	case category == "A" && elem != 0 && strings.HasPrefix(name, "_"):
		e, err := resolve(ctx, c, elem, typmod, depth+1)
		if err != nil {
			return nil, err
		}
		cd.kind, cd.elem, cd.delim = kArray, e, e.delim
		return cd, nil
	case typtype == "e":
		cd.kind = kString
		rows, err := c.Query(ctx, "SELECT enumlabel FROM pg_enum WHERE enumtypid = $1 ORDER BY enumsortorder", oid)
		if err == nil {
			cd.labels, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		return cd, err
	case typtype == "r":
		cd.kind = kString
		var sub uint32
		if err := c.QueryRow(ctx, "SELECT rngsubtype FROM pg_range WHERE rngtypid = $1", oid).Scan(&sub); err != nil {
			return nil, err
		}
		cd.sub, err = resolve(ctx, c, sub, -1, depth+1)
		return cd, err
	case typtype == "m":
		cd.kind = kString
		return cd, nil
	case typtype == "c":
		cd.kind = kString
		rows, err := c.Query(ctx, "SELECT atttypid, atttypmod FROM pg_attribute WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped ORDER BY attnum", relid)
		if err != nil {
			return nil, err
		}
		type field struct {
			oid    uint32
			typmod int32
		}
		fs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (field, error) {
			var f field
			return f, r.Scan(&f.oid, &f.typmod)
		})
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			fc, err := resolve(ctx, c, f.oid, f.typmod, depth+1)
			if err != nil {
				return nil, err
			}
			cd.fields = append(cd.fields, fc)
		}
		return cd, nil
	}
	k, ok := builtin[name]
	switch {
	case ns == "pg_catalog" && name == "numeric":
		cd.kind = kNumericVar
		if typmod >= 4 {
			cd.kind = kNumeric
			cd.digits = int((typmod - 4) >> 16 & 0xffff)
			cd.scale = int(((typmod-4)&0x7ff ^ 1024) - 1024)
		}
	case ns == "pg_catalog" && (name == "bit" || name == "varbit"):
		cd.kind, cd.prec = kBits, int(typmod)
		if typmod == 1 {
			cd.kind = kBit1
		}
	case ns == "pg_catalog" && ok:
		cd.kind = k
		switch name {
		case "time", "timetz", "timestamp", "timestamptz":
			cd.prec = int(typmod)
		case "varchar", "bpchar":
			if typmod >= 4 {
				cd.maxLen = int(typmod - 4)
			}
		}
	case name == "citext" || name == "ltree":
		cd.kind = kString
	default:
		return nil, &unsupportedType{"supported: the built-in numeric, character, binary, date/time, boolean, uuid, json, network address and bit string types, money, arrays of them, enums, domains, ranges and composite types"}
	}
	return cd, nil
}

// intRendered says whether a key column is rendered as a JSON integer
// (integers, and dates, times and timestamps as Debezium counts them).
func intRendered(c *codec) bool {
	switch c.kind {
	case kInt, kDate, kTime, kTimestamp:
		return true
	}
	return false
}

// intKeyed says whether a key column's part of the bundle key is an
// integer: its Debezium number, or a timestamptz's microseconds.
func intKeyed(c *codec) bool { return intRendered(c) || c.kind == kTimestampTZ }

// keyable says why a key column's type cannot be ordered as certify orders
// keys, or "" when it can: integers, dates, times and timestamps by their
// Debezium numbers, text/varchar/uuid byte-wise (the chunks read them
// COLLATE "C"; a uuid's hex text orders as its bytes), numeric and
// timestamptz by an order-preserving encoding of their own.
func keyable(c *codec) string {
	switch {
	case intRendered(c), c.kind == kNumeric, c.kind == kNumericVar, c.kind == kTimestampTZ:
		return ""
	case c.kind == kString && (c.base == "text" || c.base == "varchar" || c.base == "uuid" || c.base == "name"):
		return ""
	case c.base == "bpchar":
		return "PostgreSQL orders char(n) without its padding, certify with it (use varchar, or --key)"
	}
	return "supported key types: integers, numeric, text, varchar, uuid, date, time, timestamp, timestamptz"
}

// keyPart is a key column's part of the bundle key: its Debezium number,
// its text, or (numeric, timestamptz) an order-preserving form.
func keyPart(c *codec, text []byte) (certify.KeyPart, error) {
	switch c.kind {
	case kNumeric, kNumericVar:
		s, ok := numericOrderKey(string(text))
		if !ok {
			return certify.KeyPart{}, fmt.Errorf("%q is not a numeric", text)
		}
		return certify.StrPart(s), nil
	case kTimestampTZ:
		us, ok := parseTimestamp(string(text), true)
		if !ok {
			return certify.KeyPart{}, fmt.Errorf("%q is not a timestamptz", text)
		}
		return certify.IntPart(us), nil
	case kString:
		return certify.StrPart(string(text)), nil
	}
	b, err := c.render(nil, text)
	if err != nil {
		return certify.KeyPart{}, err
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return certify.KeyPart{}, fmt.Errorf("%q renders as %s, not an integer", text, b)
	}
	return certify.IntPart(n), nil
}

// numericOrderKey encodes a numeric so that byte order is PostgreSQL's
// numeric order (equal values, 1.5 and 1.50, alike): a class byte
// (-Infinity, negative, zero, positive, Infinity, NaN, as PostgreSQL
// orders them), then for a nonzero value its decimal exponent in six
// digits and its significant digits — for a negative value both
// complemented and the digits closed by '~', so a longer magnitude sorts
// first.
func numericOrderKey(s string) (string, bool) {
	switch s {
	case "-Infinity":
		return "0", true
	case "Infinity":
		return "4", true
	case "NaN":
		return "5", true
	}
	neg, intPart, frac, ok := splitDecimal(s)
	if !ok {
		return "", false
	}
	intPart = strings.TrimLeft(intPart, "0")
	exp := len(intPart)
	digits := intPart + frac
	if intPart == "" {
		t := strings.TrimLeft(frac, "0")
		exp = -(len(frac) - len(t))
		digits = t
	}
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		return "2", true
	}
	if !neg {
		return fmt.Sprintf("3%06d%s", exp+500000, digits), true
	}
	comp := []byte(digits)
	for i := range comp {
		comp[i] = '9' - comp[i] + '0'
	}
	return fmt.Sprintf("1%06d%s~", 999999-(exp+500000), comp), true
}
