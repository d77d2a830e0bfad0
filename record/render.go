package record

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Values are rendered from PostgreSQL's own text output, which both paths
// see: pgoutput sends a column's output-function text, and the chunk select
// asks for text results, under the session settings below (set as
// connection parameters, so the replication connection's walsender uses
// them too). The JSON is what Debezium's PostgreSQL connector writes with
// its default settings (decimal.handling.mode=precise,
// time.precision.mode=adaptive, interval.handling.mode=numeric,
// binary.handling.mode=bytes) through the JSON converter.
var sessionParams = map[string]string{
	"DateStyle":          "ISO, MDY",
	"IntervalStyle":      "postgres",
	"TimeZone":           "UTC",
	"extra_float_digits": "3",
	"bytea_output":       "hex",
	"lc_monetary":        "C",
}

type kind uint8

const (
	kBool kind = iota
	kInt
	kFloat
	kNumeric    // numeric(p,s): Decimal, base64 of the unscaled value at scale s
	kNumericVar // numeric: VariableScaleDecimal {"scale","value"}
	kMoney      // Decimal at scale 2 (money.fraction.digits)
	kString
	kBytea
	kDate        // io.debezium.time.Date: days since the epoch
	kTime        // MicroTime (Time, milliseconds, for time(0..3))
	kTimeTZ      // ZonedTime: the time in UTC, ISO-8601
	kTimestamp   // MicroTimestamp (Timestamp, milliseconds, for timestamp(0..3))
	kTimestampTZ // ZonedTimestamp: the instant in UTC, ISO-8601
	kInterval    // MicroDuration
	kBit1        // bit(1), varbit(1): boolean
	kBits        // io.debezium.data.Bits: little-endian bytes
	kArray
)

// codec renders one column type.
type codec struct {
	kind  kind
	typ   string // the type's name, for messages
	base  string // the built-in type it renders as (a domain's base type)
	prec  int    // time precision, -1 unqualified; bit length
	scale int    // numeric(p,s)
	elem  *codec // array element
	delim byte   // array element delimiter
	// what the workload needs to write values of it
	labels []string // enum labels
	maxLen int      // varchar(n), char(n): n; 0 unbounded
	digits int      // numeric(p,s): p
	fields []*codec // composite attributes
	sub    *codec   // range subtype
}

// render appends the JSON of a value's text form; nil is NULL.
func (c *codec) render(b []byte, text []byte) ([]byte, error) {
	if text == nil {
		return append(b, "null"...), nil
	}
	switch c.kind {
	case kBool:
		switch string(text) {
		case "t":
			return append(b, "true"...), nil
		case "f":
			return append(b, "false"...), nil
		}
	case kInt:
		if _, err := strconv.ParseInt(string(text), 10, 64); err == nil {
			return append(b, text...), nil
		}
	case kFloat:
		switch s := string(text); s {
		case "NaN", "Infinity", "-Infinity":
			// the JSON converter writes non-finite doubles as strings
			return appendString(b, s), nil
		default:
			if _, err := strconv.ParseFloat(s, 64); err == nil {
				return append(b, text...), nil
			}
		}
	case kNumeric, kMoney, kNumericVar:
		return c.renderDecimal(b, text)
	case kString:
		return appendString(b, string(text)), nil
	case kBytea:
		if bytes.HasPrefix(text, []byte(`\x`)) {
			raw := make([]byte, hex.DecodedLen(len(text)-2))
			if _, err := hex.Decode(raw, text[2:]); err == nil {
				return appendBase64(b, raw), nil
			}
		}
	case kDate:
		if d, ok := parseDate(string(text)); ok {
			return strconv.AppendInt(b, d, 10), nil
		}
	case kTime:
		if us, ok := parseClock(string(text)); ok {
			if c.prec >= 0 && c.prec <= 3 {
				us /= 1000
			}
			return strconv.AppendInt(b, us, 10), nil
		}
	case kTimeTZ:
		if s, ok := zonedTime(string(text)); ok {
			return appendString(b, s), nil
		}
	case kTimestamp:
		if us, ok := parseTimestamp(string(text), false); ok {
			if c.prec >= 0 && c.prec <= 3 && us != posInfTS && us != negInfTS {
				us = floorDiv(us, 1000)
			}
			return strconv.AppendInt(b, us, 10), nil
		}
		if _, _, ok := timestampParts(string(text), false); ok {
			return nil, fmt.Errorf("%s is beyond the microseconds since 1970 an int64 holds (Debezium's MicroTimestamp fails on it too)", text)
		}
	case kTimestampTZ:
		switch s := string(text); s {
		case "infinity", "-infinity":
			return appendString(b, s), nil
		default:
			if d, us, ok := timestampParts(s, true); ok {
				b = append(b, '"')
				return append(isoInstant(b, d, us, c.prec), '"'), nil
			}
		}
	case kInterval:
		if us, ok := microDuration(string(text)); ok {
			return strconv.AppendInt(b, us, 10), nil
		}
	case kBit1:
		if s := string(text); s != "" && strings.Trim(s, "01") == "" {
			return strconv.AppendBool(b, strings.Contains(s, "1")), nil
		}
	case kBits:
		if s := string(text); strings.Trim(s, "01") == "" {
			return appendBase64(b, bitsLE(s)), nil
		}
	case kArray:
		return c.renderArray(b, text)
	}
	return nil, fmt.Errorf("%q is not a %s as PostgreSQL writes it", text, c.typ)
}

// appendString appends s as encoding/json writes a string (HTML-escaped,
// invalid UTF-8 as U+FFFD), without its allocations: the bundle's values
// and the certify converter's, which marshals them, must be the same bytes.
func appendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			if r == utf8.RuneError {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func appendBase64(b, raw []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, raw)
	return append(b, '"')
}

// renderDecimal writes numeric and money as decimal.handling.mode=precise
// does: a fixed-scale Decimal is the base64 of its unscaled value's
// big-endian two's complement; an unconstrained numeric is a
// VariableScaleDecimal with its trailing zeros stripped (BigDecimal's
// stripTrailingZeros, never a negative scale). NaN and ±Infinity have no
// Decimal (Debezium stops with an error in this mode): they are written as
// the strings decimal.handling.mode=string writes, so the row is kept.
func (c *codec) renderDecimal(b []byte, text []byte) ([]byte, error) {
	s := string(text)
	switch s {
	case "NaN", "Infinity", "-Infinity":
		if c.kind != kMoney {
			return appendString(b, s), nil
		}
	}
	if c.kind == kMoney {
		s = strings.NewReplacer("$", "", ",", "").Replace(s)
		if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
			s = "-" + s[1:len(s)-1]
		}
	}
	neg, intPart, frac, ok := splitDecimal(s)
	if !ok {
		return nil, fmt.Errorf("%q is not a %s as PostgreSQL writes it", text, c.typ)
	}
	scale := c.scale
	switch c.kind {
	case kMoney:
		scale = 2
	case kNumericVar:
		frac = strings.TrimRight(frac, "0")
		scale = len(frac)
	}
	digits := intPart
	switch {
	case scale >= len(frac):
		digits += frac + strings.Repeat("0", scale-len(frac))
	case scale >= 0:
		digits += frac[:scale] // PostgreSQL wrote more digits than the scale: none but zeros
	default:
		digits = strings.TrimSuffix(digits, strings.Repeat("0", -scale))
	}
	var n *big.Int
	if len(digits) <= 18 {
		v, _ := strconv.ParseInt("0"+digits, 10, 64)
		if neg {
			v = -v
		}
		n = big.NewInt(v)
	} else {
		n, _ = new(big.Int).SetString(digits, 10)
		if neg {
			n.Neg(n)
		}
	}
	if c.kind == kNumericVar {
		b = append(b, `{"scale":`...)
		b = strconv.AppendInt(b, int64(scale), 10)
		b = append(b, `,"value":`...)
		return append(appendBase64(b, twosComplement(n)), '}'), nil
	}
	return appendBase64(b, twosComplement(n)), nil
}

// splitDecimal splits PostgreSQL's text of a number into its sign and
// digits before and after the point.
func splitDecimal(s string) (neg bool, intPart, frac string, ok bool) {
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	intPart, frac, _ = strings.Cut(s, ".")
	digits := func(d string) bool {
		for i := 0; i < len(d); i++ {
			if d[i] < '0' || d[i] > '9' {
				return false
			}
		}
		return true
	}
	return neg, intPart, frac, intPart != "" && digits(intPart) && digits(frac)
}

// twosComplement is Java's BigInteger.toByteArray: the minimal big-endian
// two's complement bytes.
func twosComplement(n *big.Int) []byte {
	if n.Sign() >= 0 {
		b := n.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -n-1 in bits, inverted
	m := new(big.Int).Neg(n)
	m.Sub(m, big.NewInt(1))
	b := m.Bytes()
	for i := range b {
		b[i] = ^b[i]
	}
	if len(b) == 0 || b[0]&0x80 == 0 {
		b = append([]byte{0xff}, b...)
	}
	return b
}

// bitsLE is io.debezium.data.Bits: bit i counted from the right is bit
// i%8 of byte i/8, in as many bytes as the highest set bit needs.
func bitsLE(s string) []byte {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[len(s)-1-i] == '1' {
			n = i + 1
		}
	}
	out := make([]byte, (n+7)/8)
	for i := 0; i < n; i++ {
		if s[len(s)-1-i] == '1' {
			out[i/8] |= 1 << (i % 8)
		}
	}
	return out
}

// The values Debezium (after the PostgreSQL JDBC driver) gives timestamp
// ±infinity.
const (
	posInfTS = 9223372036825200000
	negInfTS = -9223372036832400000
)

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// daysFromCivil is the day number of a proleptic Gregorian date counted
// from 1970-01-01 (astronomical years: 1 BC is year 0).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// parseDate reads an ISO date ("2024-02-29", "0044-03-15 BC") as days since
// the epoch; ±infinity are the int32 extremes, which keep their order.
func parseDate(s string) (int64, bool) {
	switch s {
	case "infinity":
		return math.MaxInt32, true
	case "-infinity":
		return math.MinInt32, true
	}
	bc := strings.HasSuffix(s, " BC")
	s = strings.TrimSuffix(s, " BC")
	ys, rest, ok1 := strings.Cut(s, "-")
	ms, ds, ok2 := strings.Cut(rest, "-")
	y, e1 := strconv.ParseInt(ys, 10, 64)
	m, e2 := strconv.ParseInt(ms, 10, 64)
	d, e3 := strconv.ParseInt(ds, 10, 64)
	if !ok1 || !ok2 || e1 != nil || e2 != nil || e3 != nil {
		return 0, false
	}
	if bc {
		y = 1 - y
	}
	return daysFromCivil(y, m, d), true
}

// parseClock reads "HH:MM:SS[.ffffff]" as microseconds past midnight.
func parseClock(s string) (int64, bool) {
	hs, rest, ok1 := strings.Cut(s, ":")
	ms, ss, ok2 := strings.Cut(rest, ":")
	h, e1 := strconv.ParseInt(hs, 10, 64)
	m, e2 := strconv.ParseInt(ms, 10, 64)
	if !ok1 || !ok2 || e1 != nil || e2 != nil {
		return 0, false
	}
	whole, frac, _ := strings.Cut(ss, ".")
	sec, e3 := strconv.ParseInt(whole, 10, 64)
	if e3 != nil || len(frac) > 6 || strings.Trim(frac, "0123456789") != "" {
		return 0, false
	}
	us, _ := strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64)
	return ((h*60+m)*60+sec)*1e6 + us, true
}

// parseOffset reads a UTC offset "+HH[:MM[:SS]]" as seconds.
func parseOffset(s string) (int64, bool) {
	if s == "" || s[0] != '+' && s[0] != '-' {
		return 0, false
	}
	var total int64
	for i, p := range strings.Split(s[1:], ":") {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || i > 2 {
			return 0, false
		}
		total += n * []int64{3600, 60, 1}[i]
	}
	if s[0] == '-' {
		total = -total
	}
	return total, true
}

// parseTimestamp reads an ISO timestamp ("2024-01-02 03:04:05.5", with
// "+00" when zoned, " BC" before Christ) as microseconds since the epoch;
// not ok beyond them (after 294247 AD, where PostgreSQL, counting from
// 2000, still has 30 years, and Debezium fails too).
func parseTimestamp(s string, zoned bool) (int64, bool) {
	switch s {
	case "infinity":
		return posInfTS, true
	case "-infinity":
		return negInfTS, true
	}
	d, us, ok := timestampParts(s, zoned)
	const maxDays = math.MaxInt64/86400_000000 - 1
	if !ok || d > maxDays || d < -maxDays {
		return 0, false
	}
	return d*86400e6 + us, true
}

// timestampParts reads an ISO timestamp as its day since the epoch and
// microsecond of that day, in UTC.
func timestampParts(s string, zoned bool) (days, us int64, ok bool) {
	bc := strings.HasSuffix(s, " BC")
	s = strings.TrimSuffix(s, " BC")
	date, clock, ok := strings.Cut(s, " ")
	if !ok {
		return 0, 0, false
	}
	var off int64
	if zoned {
		i := strings.LastIndexAny(clock, "+-")
		if i < 0 {
			return 0, 0, false
		}
		if off, ok = parseOffset(clock[i:]); !ok {
			return 0, 0, false
		}
		clock = clock[:i]
	}
	if bc {
		date += " BC"
	}
	d, ok1 := parseDate(date)
	us, ok2 := parseClock(clock)
	us -= off * 1e6
	d += floorDiv(us, 86400e6)
	return d, us - floorDiv(us, 86400e6)*86400e6, ok1 && ok2
}

// isoInstant is ZonedTimestamp's text of an instant: ISO-8601 in UTC, the
// fraction in exactly prec digits for timestamptz(1..6), else in as few as
// it needs (DateTimeFormatter.ISO_OFFSET_DATE_TIME).
func isoInstant(b []byte, days, us int64, prec int) []byte {
	y, m, d := civilFromDays(days)
	switch {
	case y > 9999:
		b = append(b, '+')
	case y < 0:
		b = append(b, '-')
		y = -y
	}
	b = appendPadded(b, y, 4)
	b = append(b, '-')
	b = appendPadded(b, m, 2)
	b = append(b, '-')
	b = appendPadded(b, d, 2)
	b = append(b, 'T')
	return append(isoClock(b, us, prec), 'Z')
}

// isoClock is DateTimeFormatter.ISO_LOCAL_TIME's text of a time of day.
func isoClock(b []byte, us int64, prec int) []byte {
	s := us / 1e6
	b = appendPadded(b, s/3600, 2)
	b = append(b, ':')
	b = appendPadded(b, s/60%60, 2)
	b = append(b, ':')
	b = appendPadded(b, s%60, 2)
	var frac [6]byte
	appendPadded(frac[:0], us%1e6, 6)
	n := 6
	if prec >= 1 && prec <= 6 {
		n = prec
	} else {
		for n > 0 && frac[n-1] == '0' {
			n--
		}
	}
	if n > 0 {
		b = append(b, '.')
		b = append(b, frac[:n]...)
	}
	return b
}

// appendPadded appends a non-negative n in at least width digits.
func appendPadded(b []byte, n int64, width int) []byte {
	var d [20]byte
	s := strconv.AppendInt(d[:0], n, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// zonedTime is ZonedTime's text of a timetz ("04:05:06.5+02"): the same
// instant of the day in UTC, ISO-8601.
func zonedTime(s string) (string, bool) {
	i := strings.LastIndexAny(s, "+-")
	if i < 0 {
		return "", false
	}
	us, ok1 := parseClock(s[:i])
	off, ok2 := parseOffset(s[i:])
	if !ok1 || !ok2 {
		return "", false
	}
	day := int64(86400e6)
	us = ((us-off*1e6)%day + day) % day
	return string(isoClock(nil, us, -1)) + "Z", true
}

// microDuration is MicroDuration's value of an interval in the postgres
// style ("1 year 2 mons -3 days +04:05:06.5"): months of 365.25/12 days,
// computed in doubles as Debezium does.
func microDuration(s string) (int64, bool) {
	var years, months, days, hours, minutes int64
	var seconds float64
	f := strings.Fields(s)
	for i := 0; i < len(f); i++ {
		if strings.Contains(f[i], ":") {
			t := f[i]
			neg := strings.HasPrefix(t, "-")
			t = strings.TrimLeft(t, "+-")
			p := strings.Split(t, ":")
			if len(p) != 3 {
				return 0, false
			}
			h, e1 := strconv.ParseInt(p[0], 10, 64)
			m, e2 := strconv.ParseInt(p[1], 10, 64)
			sec, e3 := strconv.ParseFloat(p[2], 64)
			if e1 != nil || e2 != nil || e3 != nil {
				return 0, false
			}
			if neg {
				h, m, sec = -h, -m, -sec
			}
			hours, minutes, seconds = h, m, sec
			continue
		}
		if i+1 >= len(f) {
			return 0, false
		}
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, false
		}
		switch strings.TrimSuffix(f[i+1], "s") {
		case "year":
			years = n
		case "mon":
			months = n
		case "day":
			days = n
		default:
			return 0, false
		}
		i++
	}
	const daysPerMonth = 365.25 / 12
	nd := float64(years*12+months)*daysPerMonth + float64(days)
	ns := ((nd*24+float64(hours))*60+float64(minutes))*60 + seconds
	// Java's (long) cast: toward zero, saturating
	switch us := ns * 1e6; {
	case us >= math.MaxInt64:
		return math.MaxInt64, true
	case us <= math.MinInt64:
		return math.MinInt64, true
	default:
		return int64(us), true
	}
}

// renderArray writes an array's text form ("{1,NULL,\"a b\"}", nested
// for more dimensions) as a JSON array of its elements' renderings.
func (c *codec) renderArray(b []byte, text []byte) ([]byte, error) {
	s := string(text)
	if strings.HasPrefix(s, "[") { // explicit bounds: "[0:1]={…}"
		if i := strings.Index(s, "="); i >= 0 {
			s = s[i+1:]
		}
	}
	b, rest, err := c.arrayLevel(b, s)
	if err == nil && rest != "" {
		err = fmt.Errorf("trailing %q", rest)
	}
	if err != nil {
		return nil, fmt.Errorf("%q is not a %s as PostgreSQL writes it: %v", text, c.typ, err)
	}
	return b, nil
}

func (c *codec) arrayLevel(b []byte, s string) ([]byte, string, error) {
	if s == "" || s[0] != '{' {
		return nil, "", fmt.Errorf("no '{'")
	}
	s = s[1:]
	b = append(b, '[')
	for first := true; ; first = false {
		if strings.HasPrefix(s, "}") && first {
			return append(b, ']'), s[1:], nil
		}
		if !first {
			b = append(b, ',')
		}
		var err error
		switch {
		case strings.HasPrefix(s, "{"):
			b, s, err = c.arrayLevel(b, s)
		case strings.HasPrefix(s, `"`):
			var el strings.Builder
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				el.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, "", fmt.Errorf("unterminated quote")
			}
			b, err = c.elem.render(b, []byte(el.String()))
			s = s[i+1:]
		default:
			i := strings.IndexAny(s, string(c.delim)+"}")
			if i < 0 {
				return nil, "", fmt.Errorf("no '}'")
			}
			el := s[:i]
			if el == "NULL" {
				b = append(b, "null"...)
			} else {
				b, err = c.elem.render(b, []byte(el))
			}
			s = s[i:]
		}
		if err != nil {
			return nil, "", err
		}
		switch {
		case strings.HasPrefix(s, "}"):
			return append(b, ']'), s[1:], nil
		case s != "" && s[0] == c.delim:
			s = s[1:]
		default:
			return nil, "", fmt.Errorf("expected %q or '}' at %q", c.delim, s)
		}
	}
}
