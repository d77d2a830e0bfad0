package certify

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// A Debezium record is an envelope of objects whose members the converter
// reads raw (row images, the source block). encoding/json reads such a
// record three times (validation, the top level, then each member again)
// and spent about two thirds of the converter's time; the functions here
// read it once, with encoding/json's answers (FuzzRawObject compares them).

var errJSON = errors.New("invalid JSON")

// rawMember is a member of a JSON object read by rawObject: its name,
// decoded, and its value's text.
type rawMember struct {
	name  []byte
	value json.RawMessage
}

// rawMembers is an object's members in the order written, repeated names
// included; get answers as a map read by json.Unmarshal does.
type rawMembers []rawMember

// get is the value of the last member named name (encoding/json keeps the
// last of repeated members), nil if there is none.
func (m rawMembers) get(name string) json.RawMessage {
	for i := len(m) - 1; i >= 0; i-- {
		if string(m[i].name) == name {
			return m[i].value
		}
	}
	return nil
}

// rawObject is json.Unmarshal(b, &m) for a map[string]json.RawMessage m,
// its members appended to dst[:0] (whose storage it reuses): nil for null,
// an error for anything but an object or null. Names and values alias b
// (a name that needs decoding excepted).
func rawObject(dst rawMembers, b []byte) (rawMembers, error) {
	return readMembers(dst, b, nil)
}

// readEnvelope is rawObject into st.top; as it validates them, it reads the
// objects of members named source, before and after into st's storage for
// them (st.pre), so that envelope does not read them again.
func readEnvelope(st *rawStore, b []byte) (rawMembers, error) {
	st.pre = [3]json.RawMessage{}
	m, err := readMembers(st.top, b, st)
	if cap(m) > cap(st.top) {
		st.top = m[:0]
	}
	return m, err
}

func readMembers(dst rawMembers, b []byte, st *rawStore) (rawMembers, error) {
	j := jsonScan{scanner{b: b}}
	j.space()
	if j.literal("null") {
		j.space()
		if j.i != len(b) {
			return nil, errJSON
		}
		return nil, nil
	}
	if j.i == len(b) || b[j.i] != '{' {
		if !validJSON(b) {
			return nil, errJSON
		}
		return nil, errors.New("not a JSON object")
	}
	m, err := j.object(dst, 1, st)
	if err != nil {
		return nil, err
	}
	j.space()
	if j.i != len(b) {
		return nil, errJSON
	}
	return m, nil
}

// object reads the object at j.i (its '{') into dst[:0], nested depth
// deep; with st, see readEnvelope.
func (j *jsonScan) object(dst rawMembers, depth int, st *rawStore) (rawMembers, error) {
	b := j.b
	j.i++
	m := dst[:0]
	if m == nil {
		m = rawMembers{} // an object, even empty, is not null
	}
	j.space()
	if j.eat('}') {
		return m, nil
	}
	for {
		j.space()
		start := j.i
		ok, plain := j.token()
		if !ok {
			return nil, errJSON
		}
		name := b[start+1 : j.i-1 : j.i-1]
		if !plain {
			var err error
			if name, err = jsonName(b[start:j.i:j.i]); err != nil {
				return nil, err
			}
		}
		j.space()
		if !j.eat(':') {
			return nil, errJSON
		}
		j.space()
		start = j.i
		if i := envelopeMember(name); st != nil && i >= 0 && j.i < len(b) && b[j.i] == '{' {
			into := st.member(i)
			var err error
			if *into, err = j.object(*into, depth+1, nil); err != nil {
				return nil, err
			}
			st.pre[i] = b[start:j.i:j.i]
		} else if !j.value(depth + 1) {
			return nil, errJSON
		}
		m = append(m, rawMember{name, b[start:j.i:j.i]})
		j.space()
		if j.eat(',') {
			continue
		}
		if j.eat('}') {
			return m, nil
		}
		return nil, errJSON
	}
}

// envelopeMember numbers the members readEnvelope reads the objects of.
func envelopeMember(name []byte) int {
	switch string(name) {
	case "source":
		return 0
	case "before":
		return 1
	case "after":
		return 2
	}
	return -1
}

// readObject is rawObject into the storage at *buf, which keeps the
// larger storage for the next object read there.
func readObject(buf *rawMembers, b []byte) (rawMembers, error) {
	m, err := rawObject(*buf, b)
	if cap(m) > cap(*buf) {
		*buf = m[:0]
	}
	return m, err
}

// jsonName is jsonText for a member's name, as bytes: the token's inside
// (aliasing it) when it needs no decoding.
func jsonName(raw []byte) ([]byte, error) {
	if in, ok := plainString(raw); ok {
		return in, nil
	}
	s, err := jsonText(raw)
	return []byte(s), err
}

// plainString is the inside of a string token that needs no decoding (no
// escape, ASCII only); ok is false for any other token.
func plainString(raw []byte) (in []byte, ok bool) {
	n := len(raw)
	if n < 2 || raw[0] != '"' {
		return nil, false
	}
	for _, c := range raw[1 : n-1] {
		if c == '\\' || c >= utf8.RuneSelf {
			return nil, false
		}
	}
	return raw[1 : n-1 : n-1], true
}

// validJSON is json.Valid.
func validJSON(b []byte) bool {
	j := jsonScan{scanner{b: b}}
	j.space()
	if !j.value(1) {
		return false
	}
	j.space()
	return j.i == len(b)
}

// jsonText is json.Unmarshal(raw, &s) for a valid string token raw, without
// reflection when the text needs no decoding.
func jsonText(raw []byte) (string, error) {
	if in, ok := plainString(raw); ok {
		return string(in), nil
	}
	if n := len(raw); n >= 2 && raw[0] == '"' {
		if s, ok := unescapeASCII(raw[1 : n-1]); ok {
			return s, nil
		}
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// unescapeASCII decodes the inside of a JSON string of ASCII text whose
// escapes are the one-letter ones (PostgreSQL's source.sequence is
// ["…","…"] in a string): ok is false for anything else, which
// encoding/json decodes.
func unescapeASCII(in []byte) (string, bool) {
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); i++ {
		c := in[i]
		switch {
		case c < 0x20 || c >= utf8.RuneSelf || c == '"':
			return "", false
		case c != '\\':
			out = append(out, c)
			continue
		}
		if i++; i == len(in) {
			return "", false
		}
		switch in[i] {
		case '"', '\\', '/':
			out = append(out, in[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default:
			return "", false
		}
	}
	return string(out), true
}

// rawString is json.Unmarshal(raw, &s) ignoring its error, as the source
// block's optional members are read: "" for a missing member or null.
func rawString(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	s, _ := jsonText(raw)
	return s
}

// appendCanonJSON appends json.Marshal(row) for a map row holding the
// members of an object read by rawObject (the last of repeated names): the
// members in name order, each value compacted. Names and values that
// json.Marshal would escape or compact take its path.
func appendCanonJSON(b []byte, row rawMembers) []byte {
	var buf [32]rawMember
	ms := append(buf[:0], row...)
	slices.SortStableFunc(ms, func(x, y rawMember) int { return bytes.Compare(x.name, y.name) })
	// of repeated names, the last written (last after a stable sort)
	u := 0
	for i := range ms {
		if i+1 < len(ms) && bytes.Equal(ms[i].name, ms[i+1].name) {
			continue
		}
		ms[u] = ms[i]
		u++
	}
	ms = ms[:u]
	n := 2
	for _, m := range ms {
		if len(m.value) == 0 || !marshalsAsIs(m.name, false) || !marshalsAsIs(m.value, true) {
			asMap := make(map[string]json.RawMessage, len(ms))
			for _, m := range ms {
				asMap[string(m.name)] = m.value
			}
			out, _ := json.Marshal(asMap)
			return append(b, out...)
		}
		n += len(m.name) + 4 + len(m.value)
	}
	b = slices.Grow(b, n)
	b = append(b, '{')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, m.name...)
		b = append(b, '"', ':')
		b = append(b, m.value...)
	}
	return append(b, '}')
}

// canonJSON is appendCanonJSON's text.
func canonJSON(row rawMembers) string { return string(appendCanonJSON(nil, row)) }

// marshalsAsIs says json.Marshal writes s unchanged: a name (inside its
// quotes) of printable ASCII other than a quote or backslash, or a value
// with no space outside its strings; neither with the characters Marshal
// escapes for HTML (<, >, &) or any byte beyond ASCII (U+2028, U+2029 and
// invalid UTF-8 are rewritten).
func marshalsAsIs(s []byte, value bool) bool {
	in := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf, c == '<', c == '>', c == '&':
			return false
		case !value && (c < 0x20 || c == '"' || c == '\\'):
			return false
		case value && c == '\\':
			i++ // an escape: the next byte is not a quote that ends the string
		case value && c == '"':
			in = !in
		case value && !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}

// jsonScan validates JSON text as encoding/json's scanner does, nesting
// included (at most 10000 levels). It moves over the text as the record
// scanner does (space, eat, hex4), but its value and str accept what
// encoding/json accepts: repeated members, lone surrogates, invalid UTF-8,
// where the record scanner is stricter.
type jsonScan struct{ scanner }

func (j *jsonScan) literal(w string) bool {
	if len(j.b)-j.i >= len(w) && string(j.b[j.i:j.i+len(w)]) == w {
		j.i += len(w)
		return true
	}
	return false
}

func (j *jsonScan) value(depth int) bool {
	if j.i >= len(j.b) {
		return false
	}
	switch c := j.b[j.i]; c {
	case '"':
		return j.str()
	case '{', '[':
		if depth > 10000 {
			return false
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		j.i++
		j.space()
		if j.eat(closer) {
			return true
		}
		for {
			j.space()
			if c == '{' {
				if !j.str() {
					return false
				}
				j.space()
				if !j.eat(':') {
					return false
				}
				j.space()
			}
			if !j.value(depth + 1) {
				return false
			}
			j.space()
			if j.eat(',') {
				continue
			}
			return j.eat(closer)
		}
	case 't':
		return j.literal("true")
	case 'f':
		return j.literal("false")
	case 'n':
		return j.literal("null")
	}
	return j.number()
}

func (j *jsonScan) str() bool {
	ok, _ := j.token()
	return ok
}

// strClass sorts a string's bytes: plain ASCII, the quote that ends it, the
// backslash of an escape, a control character (invalid), and a byte
// beyond ASCII (valid, but the string needs decoding).
var strClass = func() (t [256]byte) {
	for c := range t {
		switch {
		case c == '"':
			t[c] = 1
		case c == '\\':
			t[c] = 2
		case c < 0x20:
			t[c] = 3
		case c >= utf8.RuneSelf:
			t[c] = 4
		}
	}
	return t
}()

// special marks, in a word of eight string bytes (the first in the low
// byte), the bytes strClass does not call plain: a quote, a backslash, a
// control character or a byte beyond ASCII. The lowest mark is exact
// (the borrows of the subtractions only reach the bytes above a marked one).
func special(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	return zero(x^('"'*ones)) | zero(x^('\\'*ones)) | (x-0x20*ones)&^x&highs | x&highs
}

// token is str, and says whether the string is plain: no escape, ASCII
// only (its inside is its text, plainString).
func (j *jsonScan) token() (ok, plain bool) {
	if !j.eat('"') {
		return false, false
	}
	b, i := j.b, j.i
	plain = true
	for i < len(b) {
		// eight bytes at a time to the first that is not plain ASCII
		for i+8 <= len(b) {
			m := special(binary.LittleEndian.Uint64(b[i:]))
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(b) {
			break
		}
		switch strClass[b[i]] {
		case 0:
			i++
		case 1:
			j.i = i + 1
			return true, plain
		case 2:
			plain = false
			if i++; i >= len(b) {
				return false, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if _, ok := j.hex4(i + 1); !ok {
					return false, false
				}
				i += 5
			default:
				return false, false
			}
		case 3:
			return false, false
		default:
			plain = false
			i++
		}
	}
	return false, false
}

func (j *jsonScan) digits() bool {
	start := j.i
	for j.i < len(j.b) && '0' <= j.b[j.i] && j.b[j.i] <= '9' {
		j.i++
	}
	return j.i > start
}

func (j *jsonScan) number() bool {
	j.eat('-')
	switch {
	case j.eat('0'):
	case j.i < len(j.b) && '1' <= j.b[j.i] && j.b[j.i] <= '9':
		j.digits()
	default:
		return false
	}
	if j.eat('.') && !j.digits() {
		return false
	}
	if j.eat('e') || j.eat('E') {
		if !j.eat('+') {
			j.eat('-')
		}
		return j.digits()
	}
	return true
}
