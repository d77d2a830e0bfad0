package certify

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
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

// rawObject, validJSON and canonJSON answer as encoding/json does.
func FuzzRawObject(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[true,null],"a":"x"}`, ` null `, `{}`, `[1]`, `{"a\u0041":"\u00e9"}`, `{"a":1e5,"b":-0.5E-3}`, `{"x":{"y":{}}} x`,
		`{"k":"<&>"}`, `{"k": [1, 2]}`, "{\"\xff\":1}", `{"a":"\x"}`, `{"a":01}`, `{"a":"` + "\u2028" + `"}`,
		`{"seq":"[\"1000\",\"1008\"]","e":"x\\y\/z\n\t\b\f\r","u":"\u0041\n"}`, `{"bad":"\q"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want map[string]json.RawMessage
		wantErr := json.Unmarshal(b, &want)
		got, err := rawObject(b)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%q: error %v, encoding/json %v", b, err, wantErr)
		}
		if validJSON(b) != json.Valid(b) {
			t.Fatalf("%q: valid %v", b, validJSON(b))
		}
		if err != nil {
			return
		}
		if (got == nil) != (want == nil) || !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
			t.Fatalf("%q: %q, encoding/json %q", b, got, want)
		}
		if got != nil {
			w, _ := json.Marshal(want)
			if c := canonJSON(got); c != string(w) {
				t.Fatalf("%q: canonical %s, encoding/json %s", b, c, w)
			}
		}
		for k, v := range got {
			var s string
			if json.Unmarshal(v, &s) == nil && rawString(v) != s {
				t.Fatalf("%q member %q: %q, encoding/json %q", b, k, rawString(v), s)
			}
		}
	})
}
