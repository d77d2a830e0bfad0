package certify

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// field is one member of a flat JSON object: its name and its raw value.
type field struct {
	name string
	raw  []byte
}

// scanObject splits one JSON object into its members without building a
// tree: record lines are flat objects whose values are scalars or nested
// row images, and encoding/json's reflection costs more than the rest of the
// verifier together. Nested values are validated and returned raw. The
// returned slices alias line.
func scanObject(line []byte, buf []field) ([]field, error) {
	// encoding/json would replace invalid UTF-8 (and lone surrogates, see
	// skipString) by U+FFFD, so two distinct keys could read as one.
	if !utf8.Valid(line) {
		return nil, errors.New("the record is not valid UTF-8")
	}
	first := len(buf)
	s := scanner{b: line}
	s.space()
	if !s.eat('{') {
		return nil, errors.New("a record must be a JSON object")
	}
	s.space()
	if s.eat('}') {
		return buf, s.end()
	}
	for {
		s.space()
		name, err := s.name()
		if err != nil {
			return nil, err
		}
		s.space()
		if !s.eat(':') {
			return nil, errors.New("expected ':' after member name")
		}
		s.space()
		start := s.i
		if err := s.value(0); err != nil {
			return nil, err
		}
		// A repeated member would make two readers of one record disagree
		// (encoding/json keeps the last).
		for _, f := range buf[first:] {
			if strings.EqualFold(f.name, name) {
				return nil, errors.New("member " + strconv.Quote(name) + " repeats " + strconv.Quote(f.name) + " (duplicate or case-variant member names)")
			}
		}
		buf = append(buf, field{name, line[start:s.i]})
		s.space()
		if s.eat(',') {
			continue
		}
		if s.eat('}') {
			return buf, s.end()
		}
		return nil, errors.New("expected ',' or '}' in object")
	}
}

type scanner struct {
	b []byte
	i int
	// strict (a header's reading, strictJSON) refuses, in every object, a
	// repeated member and a member name that differs only in case from
	// another or from one of names.
	strict bool
	names  []string
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		if c := s.b[s.i]; c > ' ' || c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return // (most often the first byte, above a space)
		}
		s.i++
	}
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) end() error {
	s.space()
	if s.i != len(s.b) {
		return errors.New("text after the record's closing brace")
	}
	return nil
}

// name reads a member name; the record fields' names are interned.
func (s *scanner) name() (string, error) {
	start := s.i
	if err := s.skipString(); err != nil {
		return "", err
	}
	tok := s.b[start:s.i]
	switch string(tok) {
	case `"p"`:
		return "p", nil
	case `"k"`:
		return "k", nil
	case `"v"`:
		return "v", nil
	case `"x"`:
		return "x", nil
	case `"out"`:
		return "out", nil
	case `"tag"`:
		return "tag", nil
	case `"read"`:
		return "read", nil
	case `"base"`:
		return "base", nil
	}
	return decodeString(tok)
}

// str reads a string token and returns its decoded value.
func (s *scanner) str() (string, error) {
	start := s.i
	if err := s.skipString(); err != nil {
		return "", err
	}
	return decodeString(s.b[start:s.i])
}

func (s *scanner) skipString() error {
	if !s.eat('"') {
		return errors.New("expected a string")
	}
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return nil
		case c == '\\':
			if s.i+1 < len(s.b) && s.b[s.i+1] == 'u' {
				if err := s.escapeU(); err != nil {
					return err
				}
				continue
			}
			s.i += 2
		case c < 0x20:
			return errors.New("control character in string")
		default:
			s.i++
		}
	}
	return errors.New("unterminated string")
}

// escapeU reads a \uXXXX escape at s.i; a surrogate must be the first half
// of a pair followed by the second. A lone surrogate encodes no character:
// encoding/json decodes it as U+FFFD, so "d\ud800" and "d\udbff" would be
// one key.
func (s *scanner) escapeU() error {
	hi, ok := s.hex4(s.i + 2)
	if !ok {
		return errors.New("malformed \\u escape in string")
	}
	s.i += 6
	switch {
	case hi < 0xd800 || hi > 0xdfff:
		return nil
	case hi <= 0xdbff && s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u':
		if lo, ok := s.hex4(s.i + 2); ok && lo >= 0xdc00 && lo <= 0xdfff {
			s.i += 6
			return nil
		}
	}
	return errors.New("lone surrogate escape in string (not a Unicode character)")
}

func (s *scanner) hex4(at int) (rune, bool) {
	if at+4 > len(s.b) {
		return 0, false
	}
	var r rune
	for _, c := range s.b[at : at+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

const maxDepth = 64

func (s *scanner) value(depth int) error {
	if depth > maxDepth {
		return errors.New("value nested too deeply")
	}
	if s.i >= len(s.b) {
		return errors.New("expected a value")
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.skipString()
	case c == '{' || c == '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		s.i++
		s.space()
		if s.eat(closer) {
			return nil
		}
		var seen []string
		for {
			s.space()
			if c == '{' {
				var err error
				if seen, err = s.member(seen); err != nil {
					return err
				}
				s.space()
				if !s.eat(':') {
					return errors.New("expected ':' after member name")
				}
				s.space()
			}
			if err := s.value(depth + 1); err != nil {
				return err
			}
			s.space()
			if s.eat(',') {
				continue
			}
			if s.eat(closer) {
				return nil
			}
			return errors.New("expected ',' or a closing bracket")
		}
	default:
		start := s.i
		for s.i < len(s.b) {
			c := s.b[s.i]
			if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n' {
				break
			}
			s.i++
		}
		tok := s.b[start:s.i]
		switch string(tok) {
		case "true", "false", "null":
			return nil
		}
		if !isNumber(tok) {
			return errors.New("invalid literal " + strconv.Quote(string(tok)))
		}
		return nil
	}
}

// isNumber reports whether tok is a JSON number.
func isNumber(tok []byte) bool {
	i := 0
	digits := func() bool {
		start := i
		for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(tok) && tok[i] == '-' {
		i++
	}
	if i < len(tok) && tok[i] == '0' {
		i++
	} else if !digits() {
		return false
	}
	if i < len(tok) && tok[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(tok) && (tok[i] == 'e' || tok[i] == 'E') {
		i++
		if i < len(tok) && (tok[i] == '+' || tok[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(tok)
}

// decodeString decodes a quoted JSON string token.
func decodeString(tok []byte) (string, error) {
	if len(tok) < 2 || tok[0] != '"' {
		return "", errors.New("expected a string")
	}
	if !utf8.Valid(tok) {
		return "", errors.New("a string that is not valid UTF-8")
	}
	inner := tok[1 : len(tok)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), nil
	}
	if err := (&scanner{b: tok}).skipString(); err != nil {
		return "", err
	}
	var out string
	if err := json.Unmarshal(tok, &out); err != nil {
		return "", err
	}
	return out, nil
}

// parseInt reads a raw JSON integer (no fraction, no exponent).
func parseInt(raw []byte) (int64, error) {
	if n, ok := fastInt(raw); ok {
		return n, nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, errors.New("expected an integer, got " + string(raw))
	}
	return n, nil
}

// canonValue is the identity of a value: its JSON text without insignificant
// whitespace. ⊥ (null) is the empty string.
func canonValue(raw []byte) string {
	if string(raw) == "null" {
		return ""
	}
	if (raw[0] == '{' || raw[0] == '[') && bytes.ContainsAny(raw, " \t\r\n") {
		var b bytes.Buffer
		if json.Compact(&b, raw) == nil {
			return b.String()
		}
	}
	return string(raw)
}

// showValue prints a value as the paper does: ⊥ for absence.
func showValue(v string) string {
	if v == "" {
		return "⊥"
	}
	return v
}

// strictJSON checks a document that encoding/json is about to decode (a
// header): valid UTF-8 without lone surrogates, no object with a repeated
// member, and no member name that differs only in case from one of names
// (encoding/json keeps the last duplicate and matches field names without
// regard to case, so two readers of one header could disagree).
func strictJSON(b []byte, names ...string) error {
	if !utf8.Valid(b) {
		return errors.New("not valid UTF-8")
	}
	s := scanner{b: b, strict: true, names: names}
	s.space()
	if err := s.value(0); err != nil {
		return err
	}
	return s.end()
}

// member reads an object's member name and returns seen with it: strict,
// it must differ, also in case, from those seen before it in the object,
// and from names but for being one of them.
func (s *scanner) member(seen []string) ([]string, error) {
	if !s.strict {
		return nil, s.skipString()
	}
	name, err := s.str()
	if err != nil {
		return nil, err
	}
	for _, o := range seen {
		if strings.EqualFold(o, name) {
			return nil, errors.New("member " + strconv.Quote(name) + " repeats " + strconv.Quote(o) + " (duplicate or case-variant member names)")
		}
	}
	for _, n := range s.names {
		if n != name && strings.EqualFold(n, name) {
			return nil, errors.New("member " + strconv.Quote(name) + " is " + strconv.Quote(n) + " in another case (member names are case-sensitive)")
		}
	}
	return append(seen, name), nil
}
