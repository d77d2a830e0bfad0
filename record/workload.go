package record

import (
	"context"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// Workload is the seeded concurrent workload run against the table while
// it is recorded: inserts, updates (also to the same value), deletes and
// multi-row transactions. An integer key is drawn from 1..max+max/8+1, so
// some land above the snapshot's maximum key; any other key is an existing
// one (a sample read at the start) or a new one drawn for its type.
type Workload struct {
	Rate    int   // transactions per second over all clients; 0 runs none, <0 as fast as possible
	Clients int   // connections (default 2)
	MaxRows int   // rows per transaction, 1..MaxRows (default 3)
	Seed    int64 // the same seed gives the same sequence of transactions per client
}

type workload struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	txns   atomic.Int64
}

// statements are the workload's statements on a table, every value a
// parameter in its text form cast to the column's type.
type statements struct {
	insert, update, del string
	vals                []int // the columns an insert writes after the key, and an update sets
}

func prepareStatements(t *table) statements {
	var st statements
	param := func(n, i int) string { return "$" + strconv.Itoa(n) + "::text::" + t.cols[i].sqlType }
	var names, ph, keyEq []string
	for j, i := range t.key {
		names = append(names, quoteIdent(t.cols[i].name))
		ph = append(ph, param(j+1, i))
		// equality needs no COLLATE "C": deterministic collations are equal only on equal bytes
		keyEq = append(keyEq, quoteIdent(t.cols[i].name)+" = "+param(j+1, i))
	}
	var set []string
	for i := range t.cols {
		if slices.Contains(t.key, i) {
			continue
		}
		n := len(t.key) + len(st.vals) + 1
		st.vals = append(st.vals, i)
		names = append(names, quoteIdent(t.cols[i].name))
		ph = append(ph, param(n, i))
		set = append(set, quoteIdent(t.cols[i].name)+" = "+param(n, i))
	}
	where := " WHERE " + strings.Join(keyEq, " AND ")
	st.insert = "INSERT INTO " + t.qname + " (" + strings.Join(names, ", ") + ") VALUES (" + strings.Join(ph, ", ") + ") ON CONFLICT DO NOTHING"
	if len(set) > 0 {
		st.update = "UPDATE " + t.qname + " SET " + strings.Join(set, ", ") + where
	}
	st.del = "DELETE FROM " + t.qname + where
	return st
}

func startWorkload(ctx context.Context, s *session, maxKey keyVal) (*workload, error) {
	opt := s.opt.Workload
	if opt.Clients <= 0 {
		opt.Clients = 2
	}
	if opt.MaxRows <= 0 {
		opt.MaxRows = 3
	}
	t := s.tab
	kg, err := newKeyGen(ctx, s.sql, t, maxKey)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &workload{cancel: cancel}
	conns := make([]*pgx.Conn, opt.Clients)
	for i := range conns {
		c, err := connect(ctx, s.cfg)
		if err != nil {
			cancel()
			for _, c := range conns[:i] {
				c.Close(context.Background())
			}
			return nil, err
		}
		conns[i] = c
	}
	st := prepareStatements(t)
	for i, c := range conns {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			defer c.Close(context.Background())
			rng := rand.New(rand.NewPCG(uint64(opt.Seed), uint64(i)))
			var tick *time.Ticker
			if opt.Rate > 0 {
				tick = time.NewTicker(time.Duration(int64(time.Second) * int64(opt.Clients) / int64(opt.Rate)))
				defer tick.Stop()
			}
			for ctx.Err() == nil {
				if tick != nil {
					select {
					case <-tick.C:
					case <-ctx.Done():
						return
					}
				}
				b := randomTxn(rng, t, st, kg, 1+rng.IntN(opt.MaxRows))
				err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error { return tx.SendBatch(ctx, b).Close() })
				if err == nil {
					w.txns.Add(1)
				} else if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
					// A serialization failure, a lost race or a value a
					// domain's check refuses: the next transaction goes on.
					continue
				}
			}
		}()
	}
	return w, nil
}

// randomTxn draws one transaction of n row changes.
func randomTxn(rng *rand.Rand, t *table, st statements, kg *keyGen, n int) *pgx.Batch {
	keys := make([][]any, n)
	for j := range keys {
		keys[j] = kg.draw(rng)
	}
	// Rows in one order for every client: two transactions never wait on
	// each other in a cycle.
	slices.SortFunc(keys, func(a, b []any) int {
		for i := range a {
			if c := strings.Compare(a[i].(string), b[i].(string)); c != 0 {
				return c
			}
		}
		return 0
	})
	b := &pgx.Batch{}
	for _, k := range keys {
		args := slices.Clone(k)
		for _, i := range st.vals {
			args = append(args, randomValue(rng, t.cols[i]))
		}
		switch r := rng.IntN(10); {
		case r < 3 || st.update == "":
			b.Queue(st.insert, args...)
		case r < 8:
			// every column: an update that left a TOASTed value unchanged
			// would carry no full image of the row
			b.Queue(st.update, args...)
		default:
			b.Queue(st.del, k...)
		}
	}
	return b
}

// keyGen draws the workload's keys.
type keyGen struct {
	t      *table
	span   int64      // an integer key: 1..span
	sample [][]string // else: existing keys' text forms
}

func newKeyGen(ctx context.Context, c *pgx.Conn, t *table, maxKey keyVal) (*keyGen, error) {
	kg := &keyGen{t: t}
	if len(t.key) == 1 && t.cols[t.key[0]].codec.kind == kInt {
		mk, _ := strconv.ParseInt(maxKey.json, 10, 64)
		kg.span = max(mk+mk/8+1, 8)
		return kg, nil
	}
	var cols []string
	for _, i := range t.key {
		cols = append(cols, quoteIdent(t.cols[i].name))
	}
	rows, err := c.Query(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM "+t.qname+" ORDER BY random() LIMIT 256", textFormat)
	if err != nil {
		return nil, ioErr("sampling the keys of %s: %v", t.qname, pgMsg(err))
	}
	for rows.Next() {
		var k []string
		for _, v := range rows.RawValues() {
			k = append(k, string(v))
		}
		kg.sample = append(kg.sample, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, ioErr("sampling the keys of %s: %v", t.qname, pgMsg(err))
	}
	return kg, nil
}

// draw is a key as parameters: an existing one half of the time.
func (kg *keyGen) draw(rng *rand.Rand) []any {
	if kg.span > 0 {
		return []any{strconv.FormatInt(1+rng.Int64N(kg.span), 10)}
	}
	var k []any
	if len(kg.sample) > 0 && rng.IntN(2) == 0 {
		for _, s := range kg.sample[rng.IntN(len(kg.sample))] {
			k = append(k, s)
		}
		return k
	}
	for _, i := range kg.t.key {
		k = append(k, randomKeyText(rng, kg.t.cols[i].codec))
	}
	return k
}

// randomValue is a value of the column as a parameter: its text form, or
// nil (NULL) now and then where the column allows it.
func randomValue(rng *rand.Rand, col column) any {
	if !col.notNull && rng.IntN(8) == 0 {
		return nil
	}
	return randomText(rng, col.codec)
}

// pick draws from a small domain most of the time, so updates to the same
// value happen, and from the extremes otherwise.
func pick(rng *rand.Rand, common, extreme []string) string {
	if len(extreme) > 0 && rng.IntN(6) == 0 {
		return extreme[rng.IntN(len(extreme))]
	}
	return common[rng.IntN(len(common))]
}

var (
	intLimits = map[string][]string{
		"int2": {"-32768", "32767"}, "int4": {"-2147483648", "2147483647"},
		"int8": {"-9223372036854775808", "9223372036854775807"}, "oid": {"0", "4294967295"},
	}
	floatExtremes = map[string][]string{
		"float4": {"NaN", "Infinity", "-Infinity", "-0", "3.4028235e+38", "1e-45"},
		"float8": {"NaN", "Infinity", "-Infinity", "-0", "1.7976931348623157e+308", "5e-324"},
	}
	textCommon = []string{"a", "b", "B", "ä", "a b", "", "Ω", "z"}
	textOdd    = []string{`quote " and \ backslash`, "tab\tnew\nline", "日本語", "emoji 😀", "trailing  "}
)

// randomText is a value of the type in PostgreSQL's input syntax.
func randomText(rng *rand.Rand, c *codec) string {
	switch c.kind {
	case kBool:
		return pick(rng, []string{"t", "f"}, nil)
	case kInt:
		return pick(rng, []string{"0", "1", "2", "3"}, intLimits[c.base])
	case kFloat:
		return pick(rng, []string{"0", "1.5", "-2.25", "0.1"}, floatExtremes[c.base])
	case kNumeric:
		return randomNumeric(rng, c)
	case kNumericVar:
		return pick(rng, []string{"0", "1.50", "-3.25", "2"}, []string{"NaN", "Infinity", "-Infinity", "0.00000000000000000001",
			"-123456789012345678901234567890.123456789", strings.Repeat("9", 200)})
	case kMoney:
		return pick(rng, []string{"0", "1.25", "-3.50"}, []string{"92233720368547758.07", "-92233720368547758.08"})
	case kBytea:
		if rng.IntN(12) == 0 { // over the TOAST threshold, incompressible
			b := make([]byte, 3000)
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			return `\x` + hex.EncodeToString(b)
		}
		return pick(rng, []string{`\x`, `\x00`, `\xdeadbeef`}, nil)
	case kDate:
		return pick(rng, []string{"2024-02-29", "1970-01-01", "1999-12-31"}, []string{"0044-03-15 BC", "infinity", "-infinity", "5874897-12-31", "4713-01-01 BC"})
	case kTime:
		return pick(rng, []string{"00:00:00", "12:34:56.789", "23:59:59.999999"}, []string{"24:00:00"})
	case kTimeTZ:
		return pick(rng, []string{"00:00:00+00", "12:34:56.5+05:30", "23:59:59.999999-12"}, []string{"01:02:03+15:59"})
	case kTimestamp:
		return pick(rng, []string{"2024-02-29 12:00:00", "1970-01-01 00:00:00", "2000-01-01 00:00:00.123456"},
			[]string{"0044-03-15 12:00:00 BC", "infinity", "-infinity", "294000-12-31 23:59:59.999", "4713-01-01 00:00:00 BC"})
	case kTimestampTZ:
		return pick(rng, []string{"2024-02-29 12:00:00+00", "1970-01-01 00:00:00+05:30", "2000-01-01 00:00:00.123456-08"},
			[]string{"0044-03-15 12:00:00+00 BC", "infinity", "-infinity", "294276-12-31 23:59:59.999999+00", "4713-01-01 00:00:00+00 BC"})
	case kInterval:
		return pick(rng, []string{"0", "1 year 2 mons 3 days 04:05:06.78", "-1 days", "-00:00:01.5"}, []string{"1 mon -1 days +01:00:00", "100000 years", "-100000 years"})
	case kBit1:
		return pick(rng, []string{"0", "1"}, nil)
	case kBits:
		n := c.prec
		if n < 0 || n > 70 { // varbit without a length
			n = rng.IntN(70)
		}
		var b strings.Builder
		mode := rng.IntN(3)
		for i := 0; i < n; i++ {
			switch {
			case mode == 0:
				b.WriteByte('0')
			case mode == 1:
				b.WriteByte('1')
			default:
				b.WriteByte("01"[rng.IntN(2)])
			}
		}
		return b.String()
	case kArray:
		return randomArray(rng, c)
	}
	return randomString(rng, c)
}

// randomString is a value of a type rendered as a string.
func randomString(rng *rand.Rand, c *codec) string {
	switch {
	case c.labels != nil:
		return c.labels[rng.IntN(len(c.labels))]
	case c.sub != nil: // a range
		v := randomText(rng, c.sub)
		if c.sub.kind == kInt { // a discrete range's canonical upper bound is v+1
			v = strconv.Itoa(rng.IntN(4))
		}
		if rng.IntN(4) == 0 || strings.Contains(v, "inf") || strings.Contains(v, "NaN") {
			return "empty"
		}
		return "[" + quoteElem(v) + "," + quoteElem(v) + "]"
	case c.fields != nil: // a composite
		var f []string
		for _, fc := range c.fields {
			if rng.IntN(6) == 0 {
				f = append(f, "")
				continue
			}
			f = append(f, quoteElem(randomText(rng, fc)))
		}
		return "(" + strings.Join(f, ",") + ")"
	}
	switch c.base {
	case "json", "jsonb":
		return pick(rng, []string{`{"a": 1}`, `[1, 2]`, `"s"`, `null`}, []string{`{"b":[true,{"c":"ü","a":1e400}],  "a" : 0.10}`})
	case "xml":
		return pick(rng, []string{"<a>1</a>", "<b/>"}, nil)
	case "uuid":
		return pick(rng, []string{"00000000-0000-0000-0000-000000000000", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}, []string{randomUUID(rng)})
	case "inet":
		return pick(rng, []string{"10.0.0.1", "10.0.0.0/8", "::1"}, []string{"192.168.1.5/24", "2001:db8::1/64"})
	case "cidr":
		return pick(rng, []string{"10.0.0.0/8", "192.168.0.0/16"}, []string{"::/0"})
	case "macaddr":
		return pick(rng, []string{"08:00:2b:01:02:03", "ff:ff:ff:ff:ff:ff"}, nil)
	case "macaddr8":
		return pick(rng, []string{"08:00:2b:01:02:03:04:05"}, nil)
	case "pg_lsn":
		return pick(rng, []string{"0/16B3748", "FFFFFFFF/FFFFFFFF"}, nil)
	case "ltree":
		return pick(rng, []string{"a.b", "top"}, nil)
	case "char":
		return pick(rng, []string{"a", "b"}, nil)
	}
	s := pick(rng, textCommon, textOdd)
	if rng.IntN(12) == 0 { // over the TOAST threshold, hardly compressible
		var b strings.Builder
		for b.Len() < 3000 {
			b.WriteByte(byte('a' + rng.IntN(26)))
		}
		s = b.String()
	}
	if c.maxLen > 0 {
		if r := []rune(s); len(r) > c.maxLen {
			s = string(r[:c.maxLen])
		}
	}
	return s
}

func randomNumeric(rng *rand.Rand, c *codec) string {
	intDigits := c.digits - c.scale
	if rng.IntN(10) == 0 {
		return "NaN"
	}
	var s string
	if rng.IntN(6) == 0 && intDigits > 0 { // the largest magnitude
		s = strings.Repeat("9", intDigits)
	} else if intDigits > 0 {
		s = strconv.Itoa(rng.IntN(4))
	} else {
		s = "0"
	}
	if c.scale > 0 {
		s += "." + strconv.Itoa(rng.IntN(10))
	}
	if rng.IntN(3) == 0 {
		s = "-" + s
	}
	return s
}

// randomKeyText is a new key column value: a small domain (so inserts
// meet existing keys) with strings whose order differs between
// collations.
func randomKeyText(rng *rand.Rand, c *codec) string {
	switch c.kind {
	case kString:
		if c.base == "uuid" {
			return randomUUID(rng)
		}
		s := []string{"a", "B", "ä", "Z", "_x", "aa", "A", "é", "z", "0"}[rng.IntN(10)] + strconv.Itoa(rng.IntN(8))
		if c.maxLen > 0 && len([]rune(s)) > c.maxLen {
			s = string([]rune(s)[:c.maxLen])
		}
		return s
	case kNumeric, kNumericVar:
		s := strconv.Itoa(rng.IntN(200) - 100)
		if c.kind == kNumericVar || c.scale > 0 {
			s += "." + strconv.Itoa(rng.IntN(10))
		}
		return s
	case kDate:
		return "2024-01-" + strconv.Itoa(10+rng.IntN(10))
	case kTimestamp, kTimestampTZ:
		return "2024-01-01 00:00:" + strconv.Itoa(rng.IntN(60)) + "." + strconv.Itoa(rng.IntN(10))
	case kTime:
		return "12:00:" + strconv.Itoa(rng.IntN(60))
	}
	return strconv.Itoa(rng.IntN(200) - 100)
}

func randomUUID(rng *rand.Rand) string {
	b := make([]byte, 16)
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// randomArray is an array literal of one to three elements, or none.
func randomArray(rng *rand.Rand, c *codec) string {
	n := rng.IntN(4)
	var el []string
	for i := 0; i < n; i++ {
		if rng.IntN(6) == 0 {
			el = append(el, "NULL")
			continue
		}
		el = append(el, quoteElem(randomText(rng, c.elem)))
	}
	return "{" + strings.Join(el, string(c.delim)) + "}"
}

// quoteElem quotes an array element, a range bound or a composite field.
func quoteElem(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// stop ends the workload and returns the transactions it committed.
func (w *workload) stop() int64 {
	w.cancel()
	w.wg.Wait()
	return w.txns.Load()
}
