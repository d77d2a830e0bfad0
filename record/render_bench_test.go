package record

import "testing"

// mixedTable is a table of the types a typical row holds, as perf_mixed in
// the README's figures.
func mixedTable() (*table, [][]byte) {
	cols := []column{
		{name: "id", codec: &codec{kind: kInt, typ: "int8", prec: -1}},
		{name: "i", codec: &codec{kind: kInt, typ: "int4", prec: -1}},
		{name: "n", codec: &codec{kind: kNumeric, typ: "numeric", scale: 2, digits: 10, prec: -1}},
		{name: "t", codec: &codec{kind: kString, typ: "text", prec: -1}},
		{name: "ts", codec: &codec{kind: kTimestampTZ, typ: "timestamptz", prec: -1}},
		{name: "d", codec: &codec{kind: kDate, typ: "date", prec: -1}},
		{name: "b", codec: &codec{kind: kBool, typ: "bool", prec: -1}},
		{name: "f", codec: &codec{kind: kFloat, typ: "float8", prec: -1}},
		{name: "u", codec: &codec{kind: kString, typ: "uuid", prec: -1}},
		{name: "j", codec: &codec{kind: kString, typ: "jsonb", prec: -1}},
		{name: "c", codec: &codec{kind: kString, typ: "bpchar", prec: -1}},
	}
	t := &table{cols: cols, key: []int{0}, intKey: true}
	t.order = []int{6, 10, 5, 7, 1, 0, 9, 2, 3, 4, 8}
	vals := [][]byte{[]byte("123456"), []byte("456"), []byte("3456.71"), []byte("row 123456"), []byte("2024-01-02 10:17:36+00"),
		[]byte("2024-05-04"), []byte("t"), []byte("41152"), []byte("e10adc39-49ba-59ab-be56-e057f20f883e"), []byte(`{"a": "x", "k": 123456}`),
		[]byte("c123456             ")}
	return t, vals
}

// BenchmarkImageMixed renders one row of mixed types and its key, as a
// chunk read does for every row.
func BenchmarkImageMixed(b *testing.B) {
	t, vals := mixedTable()
	var buf []byte
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := t.keyOf(vals); err != nil {
			b.Fatal(err)
		}
		var err error
		if buf, err = t.image(buf[:0], vals); err != nil {
			b.Fatal(err)
		}
	}
}
