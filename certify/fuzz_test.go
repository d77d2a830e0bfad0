package certify

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"reflect"
	"slices"
	"testing"
)

// FuzzVerify: no bundle makes the verifier panic or answer without a
// failure on Reject/Unsupported. The seeds are the worked bundles; `go test
// -fuzz FuzzVerify ./certify` explores further.
func FuzzVerify(f *testing.F) {
	f.Add(bundleOf(f, runExample(f, WindowDiscard)))
	f.Add(bundleOf(f, runExample(f, RangeMerge)))
	if b, err := os.ReadFile("testdata/debezium-customers.jsonl"); err == nil {
		var out bytes.Buffer
		if _, fl, err := FromDebezium(bytes.NewReader(b), &out, DebeziumOptions{Table: "customers"}); err == nil && fl == nil {
			f.Add(out.Bytes())
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := Verify(bytes.NewReader(b), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if (res.Verdict == Accept) != (res.Failure == nil) {
			t.Fatalf("verdict %v with failure %v", res.Verdict, res.Failure)
		}
		if res.Verdict == Accept && res.Cut == nil {
			t.Fatal("Accept without a cut")
		}
	})
}

// FuzzDebezium: the converter never panics, and what it writes the verifier
// reads without an S1 failure.
func FuzzDebezium(f *testing.F) {
	if b, err := os.ReadFile("testdata/debezium-customers.jsonl"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var out bytes.Buffer
		_, fl, err := FromDebezium(bytes.NewReader(b), &out, DebeziumOptions{Table: "customers"})
		if err != nil || fl != nil {
			return
		}
		res, err := Verify(bytes.NewReader(out.Bytes()), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Failure != nil && res.Failure.Obligation == "S1" {
			t.Fatalf("the converter wrote a bundle that does not parse: %s\n%s", res.Line(), out.Bytes())
		}
	})
}

// rawObject, validJSON and canonJSON answer as encoding/json does, the
// members read into fresh storage or into storage used before.
// The envelope's shortcut (an object read with the envelope is not read
// again) holds for the member read last in this record only: a repeated
// member whose last value is no object is refused, and so is a record read
// next into the same buffer with a member of the same length at the same
// place that is no object.
func TestEnvelopeShortcut(t *testing.T) {
	buf := []byte(`{"source":{"a":1},"op":"c"}`)
	var st rawStore
	for _, c := range []struct {
		record string // copied over buf's start ("": buf as it is)
		key    string // a member of the source read, "" for an error
	}{
		{"", "a"},
		{`{"source":"abcd!","op":"c"}`, ""},
		{`{"source":{"b":2},"source":{"c":3}}`, "c"},
		{`{"source":{"b":2},"source":7}`, ""},
	} {
		if c.record != "" {
			buf = append(buf[:0], c.record...)
		}
		top, err := readEnvelope(&st, buf)
		if err != nil {
			t.Fatal(err)
		}
		var e dbzEvent
		err = e.envelope(top, &st)
		if (err == nil) != (c.key != "") || c.key != "" && (len(e.env.Source) != 1 || e.env.Source.get(c.key) == nil) {
			t.Errorf("%s: %v, source %q", buf, err, e.env.Source)
		}
	}
}

func FuzzRawObject(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[true,null],"a":"x"}`, ` null `, `{}`, `[1]`, `{"a\u0041":"\u00e9"}`, `{"a":1e5,"b":-0.5E-3}`, `{"x":{"y":{}}} x`,
		`{"k":"<&>"}`, `{"k": [1, 2]}`, "{\"\xff\":1}", `{"a":"\x"}`, `{"a":01}`, `{"a":"` + "\u2028" + `"}`,
		`{"seq":"[\"1000\",\"1008\"]","e":"x\\y\/z\n\t\b\f\r","u":"\u0041\n"}`, `{"bad":"\q"}`,
		`{"b":1,"a":2,"b":3,"\u0061":4,"c":{"a":5}}`,
		`{"source":{"a":1},"before":null,"after":{"x":[1,{"y":2}],"x":3},"source":{"b":2}}`, `{"source":{"a":1},"source":7}`, `{"after":{"a":}}`, `{"before":{}}`} {
		f.Add([]byte(s))
	}
	used := rawMembers{{[]byte("a"), json.RawMessage("1")}, {[]byte("zz"), json.RawMessage("2")}, {[]byte("b"), json.RawMessage("3")}}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want map[string]json.RawMessage
		wantErr := json.Unmarshal(b, &want)
		for _, dst := range []rawMembers{nil, slices.Clone(used)} {
			got, err := rawObject(dst, b)
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("%q: error %v, encoding/json %v", b, err, wantErr)
			}
			// readEnvelope reads the same, and the objects of source,
			// before and after as rawObject reads them
			st := rawStore{top: slices.Clone(dst), source: slices.Clone(used), pre: [3]json.RawMessage{json.RawMessage("{}")}}
			env, envErr := readEnvelope(&st, b)
			if (envErr == nil) != (err == nil) || !reflect.DeepEqual(env, got) {
				t.Fatalf("%q: readEnvelope %q %v, rawObject %q %v", b, env, envErr, got, err)
			}
			for i, name := range []string{"source", "before", "after"} {
				raw := got.get(name)
				pre := st.pre[i]
				if err != nil || raw == nil || raw[0] != '{' {
					continue
				}
				if !bytes.Equal(pre, raw) {
					t.Fatalf("%q: %s read %q, last member %q", b, name, pre, raw)
				}
				want, _ := rawObject(nil, raw)
				if got := *st.member(i); !reflect.DeepEqual(slices.Clip(got), slices.Clip(want)) {
					t.Fatalf("%q: %s %q, rawObject %q", b, name, got, want)
				}
			}
			if validJSON(b) != json.Valid(b) {
				t.Fatalf("%q: valid %v", b, validJSON(b))
			}
			if err != nil {
				return
			}
			var asMap map[string]json.RawMessage // the last of repeated names
			if got != nil {
				asMap = map[string]json.RawMessage{}
				for _, m := range got {
					asMap[string(m.name)] = m.value
				}
			}
			if (got == nil) != (want == nil) || !maps.EqualFunc(asMap, want, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
				t.Fatalf("%q: %q, encoding/json %q", b, got, want)
			}
			for _, m := range append(slices.Clone(got), used...) {
				if v, w := got.get(string(m.name)), want[string(m.name)]; !bytes.Equal(v, w) || (v == nil) != (w == nil) {
					t.Fatalf("%q: get(%q) %q, encoding/json %q", b, m.name, v, w)
				}
			}
			if got != nil {
				w, _ := json.Marshal(want)
				if c := canonJSON(got); c != string(w) {
					t.Fatalf("%q: canonical %s, encoding/json %s", b, c, w)
				}
			}
			for _, m := range got {
				var s string
				if json.Unmarshal(m.value, &s) == nil && rawString(m.value) != s {
					t.Fatalf("%q member %q: %q, encoding/json %q", b, m.name, rawString(m.value), s)
				}
			}
		}
	})
}

// readObject keeps its storage for the next object: the members of one read
// are overwritten by the next (nothing read outlives the record), and an
// empty object is not null.
func TestReadObject(t *testing.T) {
	var buf rawMembers
	a, err := readObject(&buf, []byte(`{"id":1,"name":"x","id":2}`))
	if err != nil || len(a) != 3 || string(a.get("id")) != "2" || string(a.get("name")) != `"x"` || a.get("nope") != nil {
		t.Fatalf("%q %v", a, err)
	}
	if cap(buf) < 3 || &buf[:1][0] != &a[0] {
		t.Fatalf("storage not kept: cap %d", cap(buf))
	}
	b, err := readObject(&buf, []byte(` { "k" : [1, 2] } `))
	if err != nil || len(b) != 1 || &b[0] != &a[0] || string(a[0].name) != "k" || string(b.get("k")) != "[1, 2]" {
		t.Fatalf("%q %v: the storage is not reused", b, err)
	}
	if m, err := readObject(&buf, []byte(`null`)); m != nil || err != nil {
		t.Fatalf("null: %q %v", m, err)
	}
	var none rawMembers
	if m, err := readObject(&none, []byte(`{}`)); m == nil || len(m) != 0 || err != nil {
		t.Fatalf("{}: %#v %v", m, err)
	}
	if m, err := readObject(&buf, []byte(`[1]`)); m != nil || err == nil || cap(buf) < 3 {
		t.Fatalf("[1]: %q %v, cap %d", m, err, cap(buf))
	}
	if c := canonRow(nil); c != "null" {
		t.Fatalf("canonRow(nil) %s", c)
	}
	row, _ := readObject(&buf, []byte(`{"b":1,"a":[1, 2],"b":"z","\u0063":null}`))
	if c := string(appendCanonRow([]byte("x"), row)); c != `x{"a":[1,2],"b":"z","c":null}` {
		t.Fatalf("canonical %s", c)
	}
}

// token reads eight bytes at a time: every byte at every place in a word,
// before and after the word boundary, is read as encoding/json reads it.
func TestTokenEveryByte(t *testing.T) {
	for at := range 20 {
		for c := range 256 {
			b := []byte(`"abcdefghijklmnopqrstuvw"`)
			b[1+at] = byte(c)
			j := jsonScan{scanner{b: b}}
			ok, plain := j.token()
			var s string
			wantOK := json.Unmarshal(b, &s) == nil
			_, wantPlain := plainString(b)
			if c == '"' { // the string ends there
				if !ok || !plain || j.i != at+2 {
					t.Fatalf("%q: a quote at %d: %v %v, end %d", b, at+1, ok, plain, j.i)
				}
			} else if ok != wantOK || ok && (plain != wantPlain || j.i != len(b)) {
				t.Fatalf("%q: %v %v at %d, encoding/json %v, plain %v", b, ok, plain, j.i, wantOK, wantPlain)
			}
		}
	}
}
