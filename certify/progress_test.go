package certify

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
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
			want = "partitioning distributing part 1/3 part 2/3 part 3/3 merging"
		}
		if got := strings.Join(stages, " "); got != want {
			t.Errorf("%d parts: stages %q, want %q", parts, got, want)
		}
		res, err = Verify(bytes.NewReader(b.Bytes()), Options{Parts: parts, OnProgress: func(stage string, _ Stats) {
			t.Errorf("%d parts: progress %q without an interval", parts, stage)
		}})
		if err != nil || res.Verdict != Accept {
			t.Fatal(err, res.Line())
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

// Stop: a verification (whole, and as a local split in each of its
// stages) and a conversion stopped from their progress end with
// ErrStopped and leave nothing in their directory; one whose Stop stays
// open answers as without it.
func TestStop(t *testing.T) {
	var b bytes.Buffer
	s := synth{keys: 2000, chunkKeys: 250, window: 500, events: 20000}
	if err := s.write(&b); err != nil {
		t.Fatal(err)
	}
	empty := func(dir string) {
		t.Helper()
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("left in the directory: %v", left)
		}
	}
	for _, c := range []struct {
		parts int
		at    string // the stage whose first progress stops the run ("": never)
	}{{0, "verifying"}, {3, "partitioning"}, {3, "distributing"}, {3, "part 1/3"}, {3, "part 3/3"}, {3, "merging"}, {3, ""}} {
		dir := t.TempDir()
		stop := make(chan struct{})
		res, err := Verify(bytes.NewReader(b.Bytes()), Options{Parts: c.parts, Dir: dir, Stop: stop, Progress: 1, OnProgress: func(stage string, _ Stats) {
			if stopped(stop) { // the next batch stops: nothing more is done
				t.Errorf("%d parts, stopped at %q: then %q", c.parts, c.at, stage)
			} else if stage == c.at {
				close(stop)
			}
		}})
		if c.at == "" && (err != nil || res.Verdict != Accept) || c.at != "" && !errors.Is(err, ErrStopped) {
			t.Errorf("%d parts, stopped at %q: %v %v", c.parts, c.at, res, err)
		}
		empty(dir)
	}
	var rec strings.Builder
	bounds := dbzSynth(&rec, 3000, 100, 20000)
	for _, at := range []string{"reading", "placing"} {
		dir := t.TempDir()
		stop := make(chan struct{})
		_, f, err := FromDebeziumFiles([]DebeziumInput{{Name: "r", R: strings.NewReader(rec.String())}}, &bytes.Buffer{},
			DebeziumOptions{Table: "customers", MaxKey: json.RawMessage("3000"), ChunkBounds: bounds, Dir: dir, Stop: stop, Progress: 1, OnProgress: func(stage string, _ int64) {
				if stopped(stop) {
					t.Errorf("converting, stopped at %q: then %q", at, stage)
				} else if stage == at {
					close(stop)
				}
			}})
		if f != nil || !errors.Is(err, ErrStopped) {
			t.Errorf("converting, stopped at %q: %v %v", at, f, err)
		}
		empty(dir)
	}
}
