package certify

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/certify/internal/reference"
	"github.com/cutcheck/cutcheck/model"
)

// differ runs the verifier and the independent reference on one bundle and
// says how they disagree: on Accept against anything else, or on the cut.
// Outside the reference's domain it says nothing.
func differ(b []byte) (string, reference.Verdict) {
	got, err := Verify(bytes.NewReader(b), Options{KeepState: true})
	if err != nil {
		return err.Error(), reference.Skip
	}
	ref := reference.Verify(bytes.NewReader(b))
	switch {
	case ref.Verdict == reference.Skip:
		return "", ref.Verdict
	case (got.Verdict == Accept) != (ref.Verdict == reference.Accept):
		return fmt.Sprintf("certify: %s\nreference: %v %s", got.Line(), ref.Verdict, ref.Reason), ref.Verdict
	case got.Verdict == Accept && !maps.Equal(got.Cut.State, ref.Cut):
		return fmt.Sprintf("certify's cut %v, the reference's %v", got.Cut.State, ref.Cut), ref.Verdict
	}
	return "", ref.Verdict
}

var intKey = regexp.MustCompile(`"(k|out|base|ge|gt|lt|le)":(-?[0-9]+)`)
var keyList = regexp.MustCompile(`"keys":\[([0-9,]*)\]`)

// stringKeys rewrites a model bundle's integer keys n as strings "k<n>"
// (single digits, so byte order is numeric order).
func stringKeys(b []byte) []byte {
	s := strings.Replace(string(b), `"keys":"integer"`, `"keys":"string"`, 1)
	s = keyList.ReplaceAllStringFunc(s, func(m string) string {
		inner := keyList.FindStringSubmatch(m)[1]
		if inner == "" {
			return m
		}
		var ks []string
		for _, k := range strings.Split(inner, ",") {
			ks = append(ks, `"k`+k+`"`)
		}
		return `"keys":[` + strings.Join(ks, ",") + `]`
	})
	return []byte(intKey.ReplaceAllString(s, `"$1":"k$2"`))
}

// fromReads drops the base records and declares the base unknown.
func fromReads(b []byte) []byte {
	return edit(b, func(l string) string {
		if strings.HasPrefix(l, `{"base":`) {
			return ""
		}
		return strings.Replace(l, `"base":"complete"`, `"base":"from-reads"`, 1)
	})
}

// survivorsOnly drops the reads a window event discarded.
func survivorsOnly(b []byte, c *xcase) []byte {
	return edit(b, func(l string) string {
		for i := 0; i < int(c.plan.N); i++ {
			u := &c.plan.Units[i]
			for k := model.Key(0); k < 2; k++ {
				if c.log.Touches(k, u.Window()) && strings.HasPrefix(l, fmt.Sprintf(`{"read":%d,"k":%d,`, i+1, k)) {
					return ""
				}
			}
		}
		return strings.Replace(l, `"discipline":"window-discard"`, `"discipline":"window-discard","reads":"survivors"`, 1)
	})
}

var number = regexp.MustCompile(`-?[0-9]+|null`)

// mutate changes one thing in a bundle: a number (a key, value, tag,
// position, bracket, frontier), a line dropped, or a line repeated.
func mutate(b []byte, r *rand.Rand) []byte {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	i := r.IntN(len(lines))
	switch r.IntN(4) {
	case 0:
		if i > 0 {
			lines = append(lines[:i], lines[i+1:]...)
		}
	case 1:
		lines = append(lines[:i+1], lines[i:]...)
	default:
		locs := number.FindAllStringIndex(lines[i], -1)
		if len(locs) > 0 {
			at := locs[r.IntN(len(locs))]
			repl := []string{"null", "0", "1", "2", "3"}[r.IntN(5)]
			lines[i] = lines[i][:at[0]] + repl + lines[i][at[1]:]
		}
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

// Reference: 003 §9 — the verifier against a deliberately simple one
// written from the definitions (certify/internal/reference): every case of
// the cross-check enumeration, with key lists and ranges, integer and string
// keys, complete and from-reads bases, all and survivor-only reads, and
// mutated at random; Accept exactly when the reference accepts, the same cut.
func TestReferenceAgrees(t *testing.T) {
	// A sample of the enumeration, the same on every run, so that the
	// test stays fast (a few seconds: one case in 23, in 113 under the race
	// detector).
	every := 23
	if raceEnabled {
		every = 113
	}
	r := rand.New(rand.NewPCG(1, 2))
	cases, accepted, skipped := 0, 0, 0
	check := func(c *xcase, what string, b []byte) {
		cases++
		d, v := differ(b)
		if d != "" {
			t.Fatalf("%s %v\n%s\n%s", what, c, d, b)
		}
		switch v {
		case reference.Accept:
			accepted++
		case reference.Skip:
			skipped++
		}
	}
	sampled(t, 1, 1, every, func(c *xcase, ranges bool, b []byte) {
		check(c, "model", b)
		check(c, "string keys", stringKeys(b))
		check(c, "from reads", fromReads(b))
		if ranges && c.discipline == WindowDiscard {
			check(c, "survivors", survivorsOnly(b, c))
		}
		for range 2 {
			m := mutate(b, r)
			if r.IntN(2) == 0 {
				m = fromReads(m)
			}
			check(c, "mutated", m)
		}
	})
	if accepted == 0 || accepted == cases {
		t.Fatalf("%d cases, %d accepted: the comparison is vacuous", cases, accepted)
	}
	t.Logf("%d bundles, %d accepted by both, %d outside the reference", cases, accepted, skipped)
}

// FuzzReference: the verifier and the reference agree on every bundle the
// fuzzer makes from the worked ones (`go test -fuzz FuzzReference ./certify`).
func FuzzReference(f *testing.F) {
	for _, d := range []string{WindowDiscard, RangeMerge} {
		r := runExample(f, d)
		f.Add(bundleOf(f, r))
		r.Ranges = true
		f.Add(fromReads(bundleOf(f, r)))
		f.Add(stringKeys(bundleOf(f, r)))
	}
	f.Add(executedRun(&testing.T{}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, _ := differ(b); d != "" {
			t.Fatalf("%s\n%s", d, b)
		}
	})
}
