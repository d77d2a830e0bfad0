package certify

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func convert(t *testing.T, path string) []byte {
	t.Helper()
	in, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	f, err := FromDebezium(bytes.NewReader(in), &out, DebeziumOptions{Table: "customers"})
	if err != nil || f != nil {
		t.Fatalf("convert %s: %v %v", path, err, f)
	}
	return out.Bytes()
}

// Reference: 004 §1 (Debezium's incremental snapshot is DBLog), main paper
// §7.2 and Def. 6.2: a recorded incremental snapshot of a customers table,
// two chunks, an update and a delete inside the windows, is a virtual cut.
func TestDebeziumSample(t *testing.T) {
	b := convert(t, "testdata/debezium-customers.jsonl")
	res := mustAccept(t, b)
	want := map[string]string{
		"1": `{"email":"alice@example.com","id":1,"name":"alice2"}`,
		"2": `{"email":"bob@example.com","id":2,"name":"bob2"}`,
		"4": `{"email":"dave@example.com","id":4,"name":"dave2"}`,
	}
	if len(res.Cut.State) != len(want) {
		t.Errorf("cut %v, want %v", res.Cut.State, want)
	}
	for k, v := range want {
		if res.Cut.State[k] != v {
			t.Errorf("cut[%s] = %s, want %s", k, res.Cut.State[k], v)
		}
	}
	if res.Cut.Frontier != 9 || res.Stats.Units != 2 {
		t.Errorf("frontier %d, units %d; want 9 and 2", res.Cut.Frontier, res.Stats.Units)
	}
}

// Reference: 003 §7.4 (refresh honesty is load-bearing): the tampered
// recording delivers bob's pre-capture image as the chunk row.
func TestDebeziumStaleSample(t *testing.T) {
	res := mustReject(t, convert(t, "testdata/debezium-customers-stale.jsonl"), "O2")
	if res.Failure.Key != "2" || res.Failure.Unit != 1 {
		t.Errorf("witness %+v, want key 2 of chunk 1", res.Failure)
	}
}

// A connector that forgets to discard (the no-discard mistake) delivers
// alice's buffered row after the window that updated it.
func TestDebeziumNoDiscard(t *testing.T) {
	in, _ := os.ReadFile("testdata/debezium-customers.jsonl")
	lines := strings.SplitAfter(string(in), "\n")
	var tampered []string
	for _, l := range lines {
		tampered = append(tampered, l)
		if strings.Contains(l, `"c1-close"`) {
			tampered = append(tampered, `{"before":null,"after":{"id":1,"name":"alice","email":"alice@example.com"},"source":{"table":"customers","snapshot":"incremental"},"op":"r"}`+"\n")
		}
	}
	var out bytes.Buffer
	if f, err := FromDebezium(strings.NewReader(strings.Join(tampered, "")), &out, DebeziumOptions{Table: "customers"}); f != nil || err != nil {
		t.Fatal(f, err)
	}
	mustReject(t, out.Bytes(), "window-discard emission")
}

func TestDebeziumUnsupported(t *testing.T) {
	for name, line := range map[string]string{
		"op":              `{"op":"t","source":{"table":"customers"}}`,
		"source.snapshot": `{"op":"r","after":{"id":1},"source":{"table":"customers","snapshot":"true"}}`,
		"after":           `{"op":"u","before":{"id":1},"after":null,"source":{"table":"customers"}}`,
	} {
		var out bytes.Buffer
		f, err := FromDebezium(strings.NewReader(line+"\n"), &out, DebeziumOptions{Table: "customers"})
		if err != nil || f == nil || f.Field != name {
			t.Errorf("%s: got %v %v, want Unsupported naming %s", line, f, err, name)
		}
	}
}
