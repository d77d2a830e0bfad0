package specs

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The distinct-state counts the READMEs quote in their tables are the
// results table's: a row naming a spec (`classic-4`) or a protocol at its
// defaults (`classic`, `dump --mode uncertain`, `composite` (mixed), whose
// spec is <protocol>-defaults[-mode]) must give that spec's count in its
// "distinct" column.
func TestReadmeCounts(t *testing.T) {
	b, err := os.ReadFile("../results/table.json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Spec     string `json:"spec"`
		Distinct uint64 `json:"distinct"`
	}
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	distinct := map[string]uint64{}
	for _, r := range rows {
		distinct[r.Spec] = r.Distinct
	}
	mode := regexp.MustCompile(`--mode (\w+)|\((\w+)\)`) // dump's default mode is trusted
	checked := 0
	for _, file := range []string{"../README.md", "../results/README.md"} {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		col := -1 // the "distinct" column of the current table
		lines := strings.Split(string(text), "\n")
		for i, line := range lines {
			if !strings.HasPrefix(line, "|") {
				col = -1
				continue
			}
			cells := strings.Split(strings.Trim(line, "|"), "|")
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "|---") {
				col = -1
				for j, c := range cells {
					if strings.Contains(c, "distinct") {
						col = j
						break
					}
				}
				continue
			}
			if col < 0 || col >= len(cells) || strings.HasPrefix(line, "|---") {
				continue
			}
			first := strings.TrimSpace(cells[0])
			name := strings.Trim(strings.Fields(first + " x")[0], "`")
			if strings.HasPrefix(first, "`check ") {
				name = strings.Trim(strings.Fields(first)[1], "`")
			}
			m := ""
			if sub := mode.FindStringSubmatch(first); sub != nil {
				m = sub[1] + sub[2]
			}
			spec := ""
			for _, c := range []string{name, name + "-defaults-" + m, name + "-defaults", name + "-defaults-trusted"} {
				if _, ok := distinct[c]; ok {
					spec = c
					break
				}
			}
			want, ok := distinct[spec]
			if !ok {
				continue
			}
			n, err := strconv.ParseUint(strings.ReplaceAll(strings.TrimSpace(cells[col]), ",", ""), 10, 64)
			if err != nil {
				continue // not a count (e.g. a dash)
			}
			checked++
			if n != want {
				t.Errorf("%s:%d: %s quotes %d distinct states; results/table.json has %d for %s", file, i+1, first, n, want, spec)
			}
		}
	}
	if checked < 8 {
		t.Errorf("only %d quoted counts found: the tables' layout changed", checked)
	}
}
