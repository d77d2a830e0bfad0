package certify

import (
	"bytes"
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
