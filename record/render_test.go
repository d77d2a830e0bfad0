package record

import (
	"encoding/json"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// Each type's text form renders as Debezium's default mapping writes it
// through the JSON converter. The expected values are worked out by hand
// or taken from Debezium's documentation (the MicroTimestamp of
// "2018-06-20 15:13:16.945104" is 1529507596945104 there); Decimal bytes
// are Java's BigInteger.toByteArray of the unscaled value, base64.
func TestRenderEachType(t *testing.T) {
	num := func(p, s int) *codec { return &codec{kind: kNumeric, typ: "numeric", digits: p, scale: s, prec: -1} }
	ts := func(k kind, prec int) *codec { return &codec{kind: k, typ: "t", prec: prec} }
	intArr := &codec{kind: kArray, typ: "_int4", delim: ',', elem: &codec{kind: kInt, typ: "int4"}}
	textArr := &codec{kind: kArray, typ: "_text", delim: ',', elem: &codec{kind: kString, typ: "text"}}
	for _, tc := range []struct {
		c          *codec
		text, want string
	}{
		{&codec{kind: kBool}, "t", "true"},
		{&codec{kind: kBool}, "f", "false"},
		{&codec{kind: kInt}, "-9223372036854775808", "-9223372036854775808"},
		{&codec{kind: kFloat}, "NaN", `"NaN"`},
		{&codec{kind: kFloat}, "-Infinity", `"-Infinity"`},
		{&codec{kind: kFloat}, "-0", "-0"},
		{&codec{kind: kFloat}, "1e+20", "1e+20"},
		{num(5, 2), "1.50", `"AJY="`},                                      // 150 = 0x0096
		{num(5, 2), "-1.50", `"/2o="`},                                     // -150 = 0xff6a
		{num(5, 2), "NaN", `"NaN"`},                                        // no Decimal: decimal.handling.mode=string's text
		{num(3, -2), "1200", `"DA=="`},                                     // scale -2: unscaled 12
		{num(30, 0), "0", `"AA=="`},                                        // zero is one byte
		{num(10, 0), "128", `"AIA="`},                                      // 0x0080: a sign byte
		{num(10, 0), "-128", `"gA=="`},                                     // 0x80
		{num(10, 0), "-129", `"/38="`},                                     // 0xff7f
		{&codec{kind: kNumericVar}, "1.500", `{"scale":1,"value":"Dw=="}`}, // trailing zeros stripped: 15
		{&codec{kind: kNumericVar}, "100", `{"scale":0,"value":"ZA=="}`},   // never a negative scale
		{&codec{kind: kNumericVar}, "0.000", `{"scale":0,"value":"AA=="}`},
		{&codec{kind: kNumericVar}, "Infinity", `"Infinity"`},
		{&codec{kind: kMoney}, "-$1,234.56", `"/h3A"`}, // -123456 at scale 2
		{&codec{kind: kMoney}, "$0.00", `"AA=="`},
		{&codec{kind: kString}, "ab      ", `"ab      "`}, // char(n) as stored, padded
		{&codec{kind: kString}, `{"b": 1, "a": [2]}`, `"{\"b\": 1, \"a\": [2]}"`},
		{&codec{kind: kBytea}, `\xdeadbeef`, `"3q2+7w=="`},
		{&codec{kind: kBytea}, `\x`, `""`},
		{&codec{kind: kDate}, "1970-01-02", "1"},
		{&codec{kind: kDate}, "2024-02-29", "19782"},
		{&codec{kind: kDate}, "0001-01-01 BC", "-719528"}, // 1 BC is year 0, 1970 years before the epoch's year
		{ts(kTime, -1), "12:34:56.789", "45296789000"},
		{ts(kTime, 3), "12:34:56.789", "45296789"}, // time(3): io.debezium.time.Time, milliseconds
		{ts(kTime, -1), "24:00:00", "86400000000"},
		{&codec{kind: kTimeTZ}, "04:05:06.5+02", `"02:05:06.5Z"`},
		{&codec{kind: kTimeTZ}, "01:00:00+05", `"20:00:00Z"`},
		{ts(kTimestamp, -1), "2018-06-20 15:13:16.945104", "1529507596945104"},
		{ts(kTimestamp, 3), "2018-06-20 15:13:16.945", "1529507596945"},
		{ts(kTimestamp, -1), "infinity", "9223372036825200000"},
		{ts(kTimestamp, -1), "1969-12-31 23:59:59.5", "-500000"},
		{ts(kTimestampTZ, -1), "2018-06-20 15:13:16.945104+00", `"2018-06-20T15:13:16.945104Z"`},
		{ts(kTimestampTZ, -1), "2018-06-20 15:13:16.9+00", `"2018-06-20T15:13:16.9Z"`},
		{ts(kTimestampTZ, 3), "2018-06-20 15:13:16.9+00", `"2018-06-20T15:13:16.900Z"`},
		{ts(kTimestampTZ, -1), "2018-06-20 15:13:16+05:30", `"2018-06-20T09:43:16Z"`},
		{ts(kTimestampTZ, -1), "0044-03-15 12:00:00+00 BC", `"-0043-03-15T12:00:00Z"`},
		{ts(kTimestampTZ, -1), "294276-12-31 23:59:59.999999+00", `"+294276-12-31T23:59:59.999999Z"`},
		{ts(kTimestampTZ, -1), "-infinity", `"-infinity"`},
		{&codec{kind: kInterval}, "1 year 2 mons 3 days 04:05:06.78", "37091106780000"}, // ((14·30.4375+3)·24+4)·60+5)·60+6.78 s
		{&codec{kind: kInterval}, "-1 days", "-86400000000"},
		{&codec{kind: kInterval}, "-00:00:01.5", "-1500000"},
		{&codec{kind: kInterval}, "00:00:00", "0"},
		{&codec{kind: kBit1}, "1", "true"},
		{&codec{kind: kBits}, "101", `"BQ=="`},       // bits 0 and 2 of byte 0
		{&codec{kind: kBits}, "100000000", `"AAE="`}, // bit 8: byte 1
		{&codec{kind: kBits}, "00000", `""`},         // no bit set, no byte
		{intArr, "{1,NULL,3}", "[1,null,3]"},
		{intArr, "{{1,2},{3,4}}", "[[1,2],[3,4]]"},
		{intArr, "{}", "[]"},
		{intArr, "[0:1]={5,6}", "[5,6]"},
		{textArr, `{"a b","c\"d\\",NULL,"NULL",x}`, `["a b","c\"d\\",null,"NULL","x"]`},
	} {
		got, err := tc.c.render(nil, []byte(tc.text))
		if err != nil || string(got) != tc.want {
			t.Errorf("%v %q: got %s (%v), want %s", tc.c.kind, tc.text, got, err, tc.want)
		}
	}
}

// A text form that is not the type's is an error, never a guess: the
// boolean "true" (what a ::text cast writes) once became false.
func TestRenderRefusesForeignText(t *testing.T) {
	for _, tc := range []struct {
		c    *codec
		text string
	}{
		{&codec{kind: kBool, typ: "bool"}, "true"},
		{&codec{kind: kInt, typ: "int4"}, "1.5"},
		{&codec{kind: kDate, typ: "date"}, "01/02/2024"},
		{&codec{kind: kTimestampTZ, typ: "timestamptz"}, "2024-01-02T00:00:00Z"},
		{&codec{kind: kBytea, typ: "bytea"}, `\001`},
		{&codec{kind: kArray, typ: "_int4", delim: ',', elem: &codec{kind: kInt}}, "{1,2"},
	} {
		if got, err := tc.c.render(nil, []byte(tc.text)); err == nil {
			t.Errorf("%s %q rendered as %s", tc.c.typ, tc.text, got)
		}
	}
}

// numericOrderKey's byte order is numeric order, and equal values (1.5,
// 1.50) encode alike: checked against exact rational comparison on
// random decimals of mixed signs, magnitudes and scales. Breaking it:
// dropping the '~' after a negative's digits puts -1.5 below -1.55.
func TestNumericOrderKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 3))
	draw := func() string {
		var s strings.Builder
		if rng.IntN(2) == 0 {
			s.WriteByte('-')
		}
		s.WriteString(strconv.Itoa(rng.IntN(3) * int([]int{1, 10, 1000}[rng.IntN(3)])))
		if n := rng.IntN(4); n > 0 {
			s.WriteByte('.')
			for i := 0; i < n; i++ {
				s.WriteByte(byte('0' + rng.IntN(3)*4%10))
			}
		}
		return s.String()
	}
	for n := 0; n < 20000; n++ {
		a, b := draw(), draw()
		ka, oka := numericOrderKey(a)
		kb, okb := numericOrderKey(b)
		ra, _ := new(big.Rat).SetString(a)
		rb, _ := new(big.Rat).SetString(b)
		if !oka || !okb || strings.Compare(ka, kb) != ra.Cmp(rb) {
			t.Fatalf("%s vs %s: keys %q vs %q, values compare %d", a, b, ka, kb, ra.Cmp(rb))
		}
	}
	// PostgreSQL's order of the special values: -Infinity < numbers < Infinity < NaN
	order := []string{"-Infinity", "-1", "0", "1", "Infinity", "NaN"}
	for i := 1; i < len(order); i++ {
		a, _ := numericOrderKey(order[i-1])
		b, _ := numericOrderKey(order[i])
		if a >= b {
			t.Errorf("%s encodes at or above %s", order[i-1], order[i])
		}
	}
}

// appendString writes what encoding/json writes for every string, byte by
// byte: ASCII controls, the HTML characters, U+2028/2029, invalid UTF-8.
// Breaking it: leaving '<' unescaped (the converter's json.Marshal escapes
// it, so a bundle and its events would disagree on such a value).
func TestAppendStringIsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 4))
	pieces := []string{"a", "<", ">", "&", `"`, `\`, "\x00", "\x1f", "\b", "\f", "\n", "\r", "\t", "\x7f", "é", "\u2028", "\u2029", "😀", "\xff", "\xe2\x80", "日"}
	for n := 0; n < 20000; n++ {
		var s strings.Builder
		for k := rng.IntN(8); k > 0; k-- {
			s.WriteString(pieces[rng.IntN(len(pieces))])
		}
		want, _ := json.Marshal(s.String())
		if got := appendString(nil, s.String()); string(got) != string(want) {
			t.Fatalf("%q: got %s, want %s", s.String(), got, want)
		}
	}
}
