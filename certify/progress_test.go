package certify

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// Progress: a verification, whole and as a local split, and a conversion
// report what they are doing as they go, with counts that only grow and
// stay below the totals; without OnProgress nothing is called.
func TestProgress(t *testing.T) {
	var b bytes.Buffer
	s := synth{keys: 2000, chunkKeys: 250, window: 500, events: 20000}
	if err := s.write(&b); err != nil {
		t.Fatal(err)
	}
	for _, parts := range []int{0, 3} {
		var stages []string
		var last int64
		res, err := Verify(bytes.NewReader(b.Bytes()), Options{Parts: parts, Progress: 1, OnProgress: func(stage string, st Stats) {
			if len(stages) == 0 || stages[len(stages)-1] != stage {
				stages, last = append(stages, stage), 0
			}
			if st.Lines < last || st.Lines > int64(strings.Count(b.String(), "\n")) {
				t.Errorf("%s: %d lines after %d", stage, st.Lines, last)
			}
			last = st.Lines
		}})
		if err != nil || res.Verdict != Accept {
			t.Fatal(err, res.Line())
		}
		want := "verifying"
		if parts > 0 {
			want = "partitioning part 1/3 part 2/3 part 3/3"
		}
		if got := strings.Join(stages, " "); got != want {
			t.Errorf("%d parts: stages %q, want %q", parts, got, want)
		}
	}
	var rec strings.Builder
	bounds := dbzSynth(&rec, 3000, 100, 20000)
	var stages []string
	_, f, err := FromDebeziumFiles([]DebeziumInput{{Name: "r", R: strings.NewReader(rec.String())}}, &bytes.Buffer{},
		DebeziumOptions{Table: "customers", MaxKey: json.RawMessage(strconv.Itoa(3000)), ChunkBounds: bounds, Progress: 1, OnProgress: func(stage string, n int64) {
			stages = append(stages, stage+" "+strconv.FormatInt(n, 10))
		}})
	if err != nil || f != nil {
		t.Fatal(err, f)
	}
	if len(stages) < 4 || !strings.HasPrefix(stages[0], "reading 8192") || !strings.HasPrefix(stages[len(stages)-1], "placing ") {
		t.Errorf("conversion progress: %q", stages)
	}
}
