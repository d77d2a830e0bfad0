package certify

import "strconv"

// KeyPart is one key column's value: an integer, or a string when Str is set.
type KeyPart struct {
	Int   int64
	Str   string
	IsStr bool
}

// IntPart and StrPart make key parts.
func IntPart(n int64) KeyPart  { return KeyPart{Int: n} }
func StrPart(s string) KeyPart { return KeyPart{Str: s, IsStr: true} }

// EncodeKey makes a bundle key of a row's key columns, in column order, so
// that the bundle's key order is the columns' lexicographic order. One
// integer column is an integer key (integer is true, n holds it); one string
// column is that string; several columns are a string in which each integer
// is 20 fixed-width digits (offset by 2^63, so negative ones sort first) and
// each string is terminated by NUL with NUL and \x01 escaped (\x01\x01 and
// \x01\x02), so no part's bytes run into the next one's. Byte order of the
// result ("string" keys, FORMAT.md) is then the order of the parts.
func EncodeKey(parts []KeyPart) (s string, n int64, integer bool) {
	if len(parts) == 1 {
		if !parts[0].IsStr {
			return strconv.FormatInt(parts[0].Int, 10), parts[0].Int, true
		}
		return parts[0].Str, 0, false
	}
	var b []byte
	for _, p := range parts {
		b = appendKeyPart(b, p)
	}
	return string(b), 0, false
}

// appendKeyPart is one part of a composite key as EncodeKey writes it.
func appendKeyPart(b []byte, p KeyPart) []byte {
	if !p.IsStr {
		d := strconv.FormatUint(uint64(p.Int)^1<<63, 10)
		for i := len(d); i < 20; i++ {
			b = append(b, '0')
		}
		return append(b, d...)
	}
	for i := 0; i < len(p.Str); i++ {
		switch c := p.Str[i]; c {
		case 0:
			b = append(b, 1, 1)
		case 1:
			b = append(b, 1, 2)
		default:
			b = append(b, c)
		}
	}
	return append(b, 0)
}
